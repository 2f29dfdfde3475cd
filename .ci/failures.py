#!/usr/bin/env python3
"""What failed in a red CI run, in at most 30 lines, for the end of its log.

Reads the JUnit reports that surefire and failsafe wrote (target/*-reports/TEST-*.xml) and the
build's log: each failed test with the line of its own source where it failed and the first line
of its message; each chaos run that failed with its checker's rows that are not 0 and its last
words; and, where neither explains the failure (a compile error, say), Maven's first errors.

usage: failures.py MAVEN_LOG PROJECT_DIR STARTED_EPOCH_SECONDS
Reports older than the run (a checkout's earlier builds) are left out.
"""
import glob
import os
import re
import sys
import xml.etree.ElementTree as ElementTree

LIMIT = 30
FRAME = re.compile(r"^\s*at (?:[\w$.]+/)?(?P<method>[\w$.<>]+)\((?P<file>[\w$]+\.java):(?P<line>\d+)\)")
CHAOS_SECTION = re.compile(r"^\[INFO\] --- exec(?:-maven-plugin)?:[\d.]+:exec \((?P<id>[\w-]+)\)")
FAILED_GOAL = re.compile(r"Failed to execute goal .*?\((?P<id>[\w-]+)\)")
CHECKER_ROW = re.compile(r"^\S.{60,}\s(?P<violations>\d+)$")


def failed_tests(project, since):
    """(test, where, message) for every failed or errored test case this run, surefire's first."""
    found = []
    for kind in ("surefire-reports", "failsafe-reports"):
        for report in sorted(glob.glob(os.path.join(project, "target", kind, "TEST-*.xml"))):
            if os.path.getmtime(report) < since:
                continue
            try:
                root = ElementTree.parse(report).getroot()
            except ElementTree.ParseError:
                found.append((os.path.basename(report), "", "report unreadable (the fork died?)"))
                continue
            for case in root.iter("testcase"):
                for outcome in list(case.findall("failure")) + list(case.findall("error")):
                    found.append(describe(case, outcome))
    return found


def describe(case, outcome):
    test_class = case.get("classname", "")
    simple = test_class.rsplit(".", 1)[-1]
    # A nested test class (Outer$Inner) is written in its outer class's file.
    source = simple.split("$", 1)[0] + ".java"
    name = case.get("name") or "(class set-up)"
    message = (outcome.get("message") or outcome.get("type") or "").strip().splitlines()
    trace = (outcome.text or "").splitlines()
    where = first_frame(trace, lambda frame: frame.group("file") == source) \
        or first_frame(trace, lambda frame: frame.group("method").startswith("io.payonce.")) or ""
    # A wrapped failure (a test resource or Quarkus failing to start) says what it is in its last cause.
    causes = [line.strip() for line in trace if line.startswith("Caused by:")]
    said = causes[-1] if causes else (message[0] if message else "")
    return (simple + "." + name, where, said[:160])


def first_frame(trace, wanted):
    for line in trace:
        frame = FRAME.match(line)
        if frame and wanted(frame):
            return frame.group("file") + ":" + frame.group("line")
    return None


def failed_chaos_runs(log_lines):
    """For each chaos execution Maven names as failed: its checker rows above 0 and its last lines."""
    failed_ids = {match.group("id") for line in log_lines for match in [FAILED_GOAL.search(line)] if match}
    sections, current = {}, None
    for line in log_lines:
        start = CHAOS_SECTION.match(line)
        if start:
            current = start.group("id")
            sections[current] = []
        elif line.startswith("[INFO] ---") or line.startswith("[INFO] BUILD"):
            current = None
        elif current:
            sections[current].append(line.rstrip())
    # The checker's rows come after the harness says it is checking; lines before are the run's own.
    reported = []
    for run_id in sorted(failed_ids & sections.keys()):
        lines = [line for line in sections[run_id] if line.strip()]
        checking = next((i for i, line in enumerate(lines) if line.endswith("chaos: checking")), len(lines))
        rows = [line for line in lines[checking:] if CHECKER_ROW.match(line) and CHECKER_ROW.match(line).group("violations") != "0"]
        reported.append((run_id, rows, lines[-4:]))
    return reported


def maven_errors(log_lines):
    errors = [line.rstrip() for line in log_lines if line.startswith("[ERROR]") and line.strip() != "[ERROR]"
              and "-> [Help" not in line and "re-run Maven" not in line and "full stack trace" not in line
              and "debug logging" not in line and "For more information" not in line]
    return errors[:8]


def main():
    log_path, project, since = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(log_path, errors="replace") as log:
        log_lines = log.read().splitlines()
    out = ["ci: FAILED. What failed (test reports in target/surefire-reports and target/failsafe-reports):"]
    tests = failed_tests(project, since)
    for test, where, message in dict.fromkeys(tests):
        out.append(f"ci:   {test} at {where or '?'}: {message}")
    for run_id, rows, last in failed_chaos_runs(log_lines):
        out.append(f"ci:   chaos run {run_id}: checks not 0:" + ("" if rows else " none; its last lines:"))
        out.extend(f"ci:     {row}" for row in (rows or last))
    if len(out) == 1:
        out.append("ci:   no test or chaos run failed; Maven's first errors:")
        out.extend(f"ci:     {line[:200]}" for line in maven_errors(log_lines))
    if len(out) > LIMIT:
        hidden = len(out) - (LIMIT - 1)
        out = out[:LIMIT - 1] + [f"ci:   ... and {hidden} lines more; see the reports"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
