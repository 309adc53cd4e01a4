"""ebssim_envfile: the simulator's env file (STATE_DIR/env), written by `ebssim serve` and read by the
case runner (tests/cases/run_case.py) and the simulator's self-tests (simtest.py): one module for
both sides, so the format is defined once.

Format: one ``export NAME=VALUE`` line per variable, VALUE quoted for POSIX sh (shlex.quote), so
that ``. STATE_DIR/env`` works in a shell and a value may hold spaces, quotes, ``$`` or ``=``.

Entry points: format_env(pairs) -> text; parse_env(text) -> dict; read_env_file(path) -> dict.
Invariant: parse_env(format_env(pairs)) == dict(pairs) for every string value. The reader also
takes lines without ``export`` and skips blank lines and ``#`` comments; a line that is not
NAME=VALUE after unquoting raises ValueError naming the line.
"""
import shlex


def format_env(pairs):
    """[(name, value), ...] -> the env file's text."""
    return "".join("export %s=%s\n" % (k, shlex.quote(v)) for k, v in pairs)


def parse_env(text, source="env file"):
    """The env file's text -> {name: value} (later lines win, as in a shell)."""
    env = {}
    for n, line in enumerate(text.splitlines(), 1):
        words = shlex.split(line, comments=True)
        if words[:1] == ["export"]:
            words = words[1:]
        if not words:
            continue
        name, sep, value = words[0].partition("=")
        if len(words) != 1 or not sep or not name:
            raise ValueError("%s: line %d: expected NAME=VALUE: %r" % (source, n, line))
        env[name] = value
    return env


def read_env_file(path):
    with open(path, encoding="utf-8") as f:
        return parse_env(f.read(), path)
