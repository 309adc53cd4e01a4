#!/usr/bin/python3
"""check_image.py - checks the Dockerfile without docker (hadolint is not in Debian), and checks
that the binary scripts/build-release made can run in the image's runtime stage.
Usage: check_image.py DOCKERFILE BINARY. Prints one line per problem and exits 1 if any; else
prints what it checked.

Dockerfile structure:
  * every FROM names a pinned Debian image by name (debian:bookworm or debian:bookworm-slim,
    directly or through ARG DEBIAN, or with an @sha256 digest) - never :latest or an unnamed tag;
  * no ADD of a URL (no download outside Debian's archive); no curl/wget in RUN;
  * the last stage sets USER to a numeric, non-zero uid (runAsNonRoot needs a number to check);
  * the last stage copies exactly one file from the build stage, the binary, to
    /usr/local/bin/ebsmigrate (deploy/'s containers run that path), and installs ca-certificates;
  * the build stage runs scripts/build-release (the script CI builds with).
Libraries: every library `ldd BINARY` resolves belongs to a Debian package that the runtime
stage's `apt-get install` list names, or that one of them depends on (apt installs it too), or
that the base image holds (the Essential packages and what they depend on, present in every
Debian image, slim included). Package data comes from this machine's dpkg database, which is
bookworm like the image.
"""

import re
import shlex
import subprocess
import sys


def dpkg_owners(paths):
    """{path: the package that owns it} for the paths some package owns; /lib and /usr/lib are the
    same directory (usrmerge), so both spellings are asked, the one given first. One dpkg call:
    dpkg reads every package's file list once per call, seconds on a loaded machine."""
    cands = {}
    for path in paths:
        cands[path] = [path]
        if path.startswith("/usr/lib/"):
            cands[path].append(path[4:])
        elif path.startswith("/lib"):
            cands[path].append("/usr" + path)
    asked = sorted({c for cs in cands.values() for c in cs})
    asked_set, found = set(asked), {}
    if asked:  # exit 1 when some path has no owner; the owned ones are printed all the same
        out = subprocess.run(["dpkg", "-S"] + asked, capture_output=True, text=True).stdout
        for line in out.splitlines():
            owner, sep, path = line.rpartition(": ")
            if sep and path in asked_set and not line.startswith("diversion "):
                found.setdefault(path, owner.split(":")[0].strip())
    owners = {}
    for path, cs in cands.items():
        for c in cs:
            if c in found:
                owners[path] = found[c]
                break
    return owners


def depends_closure(pkgs):
    """pkgs plus everything they Depend/Pre-Depend on, transitively (installed packages only).
    One dpkg-query per level of the graph rather than one per package."""
    seen, todo = set(), set(pkgs)
    while todo:
        batch = sorted(todo - seen)
        todo = set()
        if not batch:
            break
        seen.update(batch)
        q = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}\n"] + batch,
                           capture_output=True, text=True)  # exit 1 when one is not installed
        for line in q.stdout.splitlines():
            for alt in line.split(","):
                for choice in alt.split("|"):
                    name = choice.strip().split(" ")[0].split(":")[0]
                    if name:
                        todo.add(name)
    return seen


def essential():
    q = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential}\n"], capture_output=True, text=True)
    return [line.split()[0] for line in q.stdout.splitlines() if line.endswith(" yes")]


def main():
    dockerfile, binary = sys.argv[1], sys.argv[2]
    text = open(dockerfile).read()
    # join continuation lines, drop comments
    logical = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            logical.append(s)
    problems = []
    args = {}
    stages = []  # [(from_line, [instructions])]
    for s in logical:
        word, _, rest = s.partition(" ")
        word = word.upper()
        if word == "ARG" and not stages:
            k, _, v = rest.partition("=")
            args[k.strip()] = v.strip()
        elif word == "FROM":
            stages.append((rest, []))
        elif stages:
            stages[-1][1].append((word, rest))
    if not stages:
        problems.append("no FROM")
        return report(problems)
    for frm, _ in stages:
        image = frm.split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), image)
        if not re.match(r"^debian:bookworm(-slim)?(@sha256:[0-9a-f]{64})?$", image):
            problems.append("FROM %s: not a pinned Debian bookworm image" % image)
    for _, ins in stages:
        for word, rest in ins:
            if word == "ADD" and re.search(r"\b(https?|ftp)://", rest):
                problems.append("ADD of a URL: %s" % rest)
            if word == "RUN" and re.search(r"\b(curl|wget)\b", rest):
                problems.append("RUN downloads with curl/wget: %s" % rest)
    build_ins, final_ins = stages[0][1], stages[-1][1]
    if not any(w == "RUN" and "scripts/build-release" in r for w, r in build_ins):
        problems.append("the build stage does not run scripts/build-release")
    users = [r for w, r in final_ins if w == "USER"]
    uid = users[-1].split(":")[0] if users else ""
    if not uid.isdigit() or int(uid) == 0:
        problems.append("the runtime stage's USER is %r, not a numeric non-root uid" % (users[-1] if users else None))
    copies = [r for w, r in final_ins if w == "COPY" and "--from=" in r]
    if len(copies) != 1 or not copies[0].split()[-1] == "/usr/local/bin/ebsmigrate":
        problems.append("the runtime stage must copy only the binary to /usr/local/bin/ebsmigrate: %s" % copies)
    runtime_pkgs = []
    for w, r in final_ins:
        if w == "RUN" and "apt-get install" in r:
            for cmd in r.split("&&"):
                words = shlex.split(cmd)
                if words[:2] == ["apt-get", "install"]:
                    runtime_pkgs += [x for x in words[2:] if not x.startswith("-")]
    if "ca-certificates" not in runtime_pkgs:
        problems.append("the runtime stage does not install ca-certificates")

    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = sorted({m.group(1) for m in re.finditer(r"=>\s+(/\S+)", ldd)})
    if not libs:
        problems.append("ldd found no libraries in %s" % binary)
    installed = depends_closure(runtime_pkgs)
    base = depends_closure(essential())
    owner_of = dpkg_owners(libs)
    owners = {}
    for lib in libs:
        pkg = owner_of.get(lib)
        if pkg is None:
            problems.append("%s: no Debian package owns it" % lib)
            continue
        owners.setdefault(pkg, []).append(lib)
        if pkg not in installed and pkg not in base:
            problems.append("%s (package %s) is neither installed by the runtime stage nor in the base image"
                            % (lib, pkg))
    if report(problems):
        return 1
    direct = sorted(p for p in owners if p in runtime_pkgs)
    print("ok: %d stages, USER %s, %d libraries from %d packages; listed: %s; pulled in by them or in the base: %d"
          % (len(stages), uid, len(libs), len(owners), " ".join(direct), len(owners) - len(direct)))
    return 0


def report(problems):
    for p in problems:
        print(p)
    return bool(problems)


if __name__ == "__main__":
    sys.exit(main())
