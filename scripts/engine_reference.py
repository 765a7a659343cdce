#!/usr/bin/env python3
"""Regenerates the packet engine's reference results (tests/data/engine-reference/NAME.json) from
the scenarios in tests/data/engine-reference/scenarios.txt, with the Release binary.

The references guard refactorings of the packet engine (event core, packet storage, forwarding
path): tests/integration/PacketEngineReferenceTest.cpp reruns every scenario and requires the same
results, byte for byte. They are not evidence that the model is right (the other tests are); they
say that a change which should not touch the model did not. Regenerate them only for a change that
is meant to change what the packet backend computes, and say in its commit message which
scenarios changed and why (`--check` lists them without writing).

Usage: scripts/engine_reference.py [--binary PATH] [--check] [NAME ...]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDER = os.path.join(ROOT, "tests/data/engine-reference")


def ignored_keys():
    """The JSON pointers of ignored-keys.txt: what describes the host or the engine's bookkeeping."""
    with open(os.path.join(FOLDER, "ignored-keys.txt")) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def scenarios():
    """[(name, [args])] in file order."""
    out = []
    with open(os.path.join(FOLDER, "scenarios.txt")) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, rest = line.partition(" ")
            if not rest:
                sys.exit(f"scenarios.txt:{n}: a name and the arguments of `fabricsim run` expected")
            out.append((name, shlex.split(rest)))
    return out


def normalised(results):
    for pointer in ignored_keys():
        *parents, key = pointer.split("/")[1:]
        d = results
        for part in parents:
            d = d.get(part, {})
        d.pop(key, None)
    return results


def run(binary, args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        p = subprocess.run([binary, "run"] + args + ["--quiet", "--out", out], cwd=ROOT, capture_output=True,
                           text=True)
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): fabricsim run {shlex.join(args)}\n{p.stderr}")
        with open(out) as f:
            return normalised(json.load(f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/release/fabricsim"))
    ap.add_argument("--check", action="store_true", help="list the scenarios whose results differ; write nothing")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    selected = [(n, args) for n, args in scenarios() if not a.names or n in a.names]
    differ = 0
    for name, args in selected:
        path = os.path.join(FOLDER, name + ".json")
        r = run(a.binary, args)
        text = json.dumps(r, indent=1, sort_keys=True) + "\n"
        if a.check:
            old = None
            if os.path.exists(path):
                with open(path) as f:
                    old = json.load(f)
            same = old == r
            differ += not same
            print(f"{name}: {'same' if same else 'DIFFERS'}")
            continue
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        print(f"{name}: written ({len(text):,} bytes)")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
