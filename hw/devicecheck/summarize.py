#!/usr/bin/env python3
"""Summarize a device check's replays as a Markdown table.

    python3 hw/devicecheck/summarize.py OUTDIR

OUTDIR is what `hw/devicecheck/run.sh device OUTDIR` wrote (unpacked from its
tarball). One row per replay step, read from its replay-STEP.txt (the first
lines replay prints) and replay-STEP.err (the spread of the runs, the host
probe): the median op error over all timed ops and over the modelled ones
(copies and memory kernels), the makespan error, and the makespans of the
runs. Steps that failed or were skipped are listed with their exit status
from log.txt, without numbers. The table is for docs/measured/DATE-GPU/README.md; check it
against the files before committing.
"""
import os
import re
import sys

HEAD = re.compile(r"^(\S+) on (\S+): predicted (.+), measured (.+) \(makespan error (\S+)\)$")
MEDIAN = re.compile(r"^median \|error\| over (\d+) kernels, copies and host ops: (\S+)$")
MODELLED = re.compile(r"^over the (\d+) copies and memory kernels, whose durations the model predicts: (\S+) ")
RUNS = re.compile(r"^hw: (\d+) runs, makespans (.+) to (.+); comparing with the median, (.+)$")
PROBE = re.compile(r"^hw: host time per kernel op before each run (.+) to (.+); the compared run is predicted with the (.+) before it, where the topology has (.+)$")
STEP = re.compile(r"^== (\S+): ")
EXIT = re.compile(r"^   exit (\d+) in (\d+) ms$")
SKIPPED = re.compile(r"^   skipped: (.*)$")


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def steps(out):
    """The replay steps of log.txt in order, each with its exit status or
    why it was skipped."""
    order, status = [], {}
    name = None
    for line in read(os.path.join(out, "log.txt")):
        m = STEP.match(line)
        if m:
            name = m.group(1)
            if name.startswith("replay-") and not name.endswith("-json"):
                order.append(name)
            continue
        if name is None:
            continue
        m = EXIT.match(line)
        if m:
            status[name] = "exit " + m.group(1)
        m = SKIPPED.match(line)
        if m:
            status[name] = "skipped"
    return order, status


def row(out, step, status):
    # Numbers only of a step that ended well: a skipped one's files, or a
    # stopped one's partial output, are not this run's results.
    if status != "exit 0":
        return "| `%s` | %s | | | | | |" % (step[len("replay-"):], status or "no exit status (the check was stopped in it?)")
    txt = read(os.path.join(out, step + ".txt"))
    err = read(os.path.join(out, step + ".err"))
    head = HEAD.match(txt[0]) if txt else None
    if not head:
        return "| `%s` | %s | | | | | |" % (step[len("replay-"):], "exit 0, but no replay table in " + step + ".txt")
    scenario, _, pred, meas, mk = head.groups()
    timed = median = modelled = ""
    for line in txt[1:4]:
        m = MEDIAN.match(line)
        if m:
            timed, median = m.groups()
        m = MODELLED.match(line)
        if m:
            modelled = "%s (%s)" % (m.group(2), m.group(1))
        if line.startswith("each of them tests the model"):
            modelled = "%s (%s)" % (median, timed)
        if line.startswith("none of them tests the model"):
            modelled = "- (0)"
    runs = ""
    notes = []
    for line in err:
        m = RUNS.match(line)
        if m:
            runs = "%s runs: %s to %s" % (m.group(1), m.group(2), m.group(3))
        m = PROBE.match(line)
        if m:
            notes.append("probed %s to %s a kernel op (topology: %s)" % (m.group(1), m.group(2), m.group(4)))
    if not runs:
        runs = "1 run: " + meas if err else "(no %s.err)" % step
    return "| `%s` | %s | %s | %s | %s | %s | %s |" % (
        step[len("replay-"):], scenario, timed, median, modelled, mk,
        runs + ("; " + "; ".join(notes) if notes else ""))


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: summarize.py OUTDIR (what run.sh device wrote)", file=sys.stderr)
        return 2
    out = argv[1]
    order, status = steps(out)
    if not order:
        print("summarize.py: %s/log.txt names no replay step" % out, file=sys.stderr)
        return 1
    print("| step | scenario | timed ops | median op error | modelled: median (ops) | makespan error | makespans |")
    print("|---|---|---|---|---|---|---|")
    for step in order:
        print(row(out, step, status.get(step)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
