#!/usr/bin/python3
"""ci_example_script.py FILE - the gp2 gate's commands from a CI example of examples/ci/, as a
shell script on stdout, so a case can run exactly what the documentation tells people to run.

  a GitHub Actions workflow: the `run` of the step named "gp2 gate", after checking that the job
    may upload SARIF (permissions security-events: write) and that the upload step runs
    `if: always()` on the file the gate writes;
  a GitLab CI file: the `script` lines of the job gp2-gate, after checking that its JUnit report
    is a `reports: junit` artifact kept `when: always`.

Exits 1 with the reason when the example lacks what it must have.
"""
import sys

import yaml


def fail(msg):
    print(f"{sys.argv[1]}: {msg}", file=sys.stderr)
    sys.exit(1)


def github(doc):
    if doc.get("permissions", {}).get("security-events") != "write":
        fail("permissions: security-events: write is missing")
    for job in doc["jobs"].values():
        steps = job.get("steps", [])
        gate = [s for s in steps if s.get("name") == "gp2 gate"]
        upload = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")]
        if not gate:
            continue
        if not upload or "always()" not in str(upload[0].get("if", "")):
            fail("no upload-sarif step that runs if: always()")
        sarif = upload[0]["with"]["sarif_file"]
        if f"--sarif {sarif}" not in gate[0]["run"]:
            fail(f"the gate does not write {sarif}")
        return gate[0]["run"]
    fail("no step named 'gp2 gate'")


def gitlab(doc):
    job = doc.get("gp2-gate")
    if not job:
        fail("no job gp2-gate")
    art = job.get("artifacts", {})
    junit = art.get("reports", {}).get("junit")
    if art.get("when") != "always" or not junit:
        fail("the JUnit report is not an artifact kept when: always")
    script = "\n".join(job["script"])
    if f"--junit {junit}" not in script:
        fail(f"the gate does not write {junit}")
    return script + "\n"


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    # PyYAML (YAML 1.1) reads a workflow's `on:` key as True: it is the GitHub file that has jobs
    sys.stdout.write(github(doc) if "jobs" in doc else gitlab(doc))


if __name__ == "__main__":
    main()
