"""The env file the simulator writes (ebssim_envfile.format_env) reads back the same in the case
runner (run_case.Sim.env) and in the simulator's self-tests (simtest.SimProcess): one parser, and
values with spaces, quotes, '$' and '=' survive the round trip."""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "cases"))

import ebssim_envfile  # noqa: E402
import run_case  # noqa: E402
import simtest  # noqa: E402

PAIRS = [("AWS_ENDPOINT_URL_EC2", "https://127.0.0.1:41234"),
         ("AWS_CA_BUNDLE", "/tmp/it's a dir/state/ca.crt"),
         ("EBSSIM_NOTE", 'say "hi" for $HOME; a=b'),
         ("AWS_SESSION_TOKEN", "IQoJb3JpZ2luX2VjEA==/x+y"),
         ("EMPTY", "")]


class EnvFileTest(unittest.TestCase):
    def test_round_trip(self):
        text = ebssim_envfile.format_env(PAIRS)
        self.assertEqual(text.splitlines()[0], "export AWS_ENDPOINT_URL_EC2=https://127.0.0.1:41234")
        self.assertEqual(ebssim_envfile.parse_env(text), dict(PAIRS))

    def test_case_runner_reads_what_the_simulator_writes(self):
        state = tempfile.mkdtemp(prefix="envfile-test-")
        with open(os.path.join(state, "env"), "w") as f:
            f.write(ebssim_envfile.format_env(PAIRS))
        stub = run_case.Sim.__new__(run_case.Sim)
        stub.state = state
        self.assertEqual(stub.env(), dict(PAIRS))
        os.unlink(os.path.join(state, "env"))
        os.rmdir(state)

    def test_one_parser(self):
        self.assertIs(run_case.read_env_file, ebssim_envfile.read_env_file)
        self.assertIs(simtest.read_env_file, ebssim_envfile.read_env_file)

    def test_other_lines(self):
        env = ebssim_envfile.parse_env("# made by ebssim\n\nA=1\nexport B='two words'\nA=3\n")
        self.assertEqual(env, {"A": "3", "B": "two words"})
        with self.assertRaisesRegex(ValueError, r"x\.env: line 2: expected NAME=VALUE"):
            ebssim_envfile.parse_env("A=1\nnot an assignment\n", "x.env")


if __name__ == "__main__":
    unittest.main()
