#!/usr/bin/env python3
"""scripts/conformance: run the upstream Kubernetes e2e suite's API selection against a fresh
flotilla hub (or, with --member, a kube-apiserver member cluster as the reference).

See `scripts/conformance --help`. The selection and the reasons for what it leaves out are in
conformance_specs.py.
"""

import argparse
import concurrent.futures as futures
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance_specs as specs  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
K8S_MOD = os.path.join(ROOT, "tools", "k8s")


def say(msg):
    print(f"conformance: {msg}", file=sys.stderr, flush=True)


def die(msg):
    say(msg)
    sys.exit(2)


def parse_args():
    p = argparse.ArgumentParser(
        prog="scripts/conformance",
        description="Run the upstream e2e suite's API selection (every [sig-api-machinery] spec "
        "that needs no running pod, and the API-only [Conformance] specs of the other groups) "
        "against a fresh flotilla hub, one e2e.test process per spec, and print passed/failed/"
        "skipped with each failure's reason. The e2e.test binary is built once per machine "
        "from tools/k8s into the member binaries' cache.",
    )
    p.add_argument("--member", action="store_true",
                   help="run against a real kube-apiserver member cluster (scripts/members up 1, "
                   "watch cache on) instead of a hub: the reference figures")
    p.add_argument("--conformance-only", action="store_true",
                   help="only the [Conformance]-tagged specs (what scripts/test runs)")
    p.add_argument("--focus", metavar="RE",
                   help="only specs whose name matches this regular expression")
    p.add_argument("--jobs", type=int, default=2,
                   help="specs run at once (default 2; [Serial] specs always run alone)")
    p.add_argument("--spec-timeout", type=int, default=300, metavar="SECONDS",
                   help="limit of one spec (default 300; a few known-long specs get more)")
    p.add_argument("--kubeconfig",
                   help="run against this already running server instead of starting one")
    p.add_argument("--known-failures", metavar="FILE",
                   help="specs known to fail, one name per line ('#' comments): they are not run "
                   "(so a spec that waits minutes for what the hub lacks costs no time) and are "
                   "listed at the end; any other failure makes the run fail")
    p.add_argument("--run-known", action="store_true",
                   help="with --known-failures: run the listed specs too, and report those that "
                   "now pass")
    p.add_argument("--record", action="store_true",
                   help="append the counts and the time of the run to BENCHMARKS.md")
    p.add_argument("--list", action="store_true",
                   help="print the selection (and what is left out, with why) and exit")
    p.add_argument("--flotilla", default=os.environ.get("FLOTILLA_BIN"),
                   help="the flotilla binary (default $FLOTILLA_BIN, else cargo builds it)")
    return p.parse_args()


# ---------------------------------------------------------------------------------------------
# The e2e.test binary


def find_go():
    go = os.environ.get("GO") or shutil.which("go")
    if not go and os.access("/usr/local/go/bin/go", os.X_OK):
        go = "/usr/local/go/bin/go"
    if not go:
        die("the Go toolchain is not installed: install Go >= 1.24 (or set GO=/path/to/go); "
            "e2e.test is built from the tools/k8s module")
    return go


def cache_dir():
    out = subprocess.run([os.path.join(ROOT, "scripts", "members"), "path"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        die(f"scripts/members path failed: {out.stderr.strip()}")
    return out.stdout.strip()


def e2e_stamp():
    h = hashlib.sha256()
    for f in ("go.mod", "go.sum"):
        with open(os.path.join(K8S_MOD, f), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def build_e2e(cache):
    """The e2e.test of the Kubernetes version tools/k8s pins, built once per machine."""
    binary = os.path.join(cache, "e2e.test")
    stamp_file = os.path.join(cache, ".e2e-stamp")
    stamp = e2e_stamp()
    if os.access(binary, os.X_OK) and os.path.exists(stamp_file) and \
            open(stamp_file).read().strip() == stamp:
        return binary
    os.makedirs(cache, exist_ok=True)
    go = find_go()
    say(f"building e2e.test from tools/k8s into {cache} (after scripts/members build: a few "
        "minutes; cold: the Go modules are downloaded first)")
    start = time.time()
    tmp = binary + ".tmp"
    env = dict(os.environ, CGO_ENABLED="0", GOTOOLCHAIN="local",
               GOFLAGS=f"-p={os.environ.get('MEMBERS_GO_P', '2')} -mod=readonly -buildvcs=false")
    # -vet=off: go test -c runs vet by default, and vet of this Kubernetes tree fails with
    # newer Go releases; -tags/-trimpath as scripts/members builds, so the build cache is shared.
    cmd = ["nice", "-n", "19", go, "test", "-c", "-vet=off", "-trimpath", "-tags",
           "selinux,notest", "-o", tmp, "k8s.io/kubernetes/test/e2e"]
    if subprocess.run(cmd, cwd=K8S_MOD, env=env).returncode != 0:
        die("building e2e.test failed (the Go errors are above); the module is tools/k8s")
    os.replace(tmp, binary)
    with open(stamp_file, "w") as fh:
        fh.write(stamp + "\n")
    say(f"built e2e.test in {time.time() - start:.0f} s")
    return binary


def all_specs(e2e, work):
    """Every spec of the binary, from a ginkgo dry run: (name, serial)."""
    report = os.path.join(work, "dry-run.json")
    out = subprocess.run([e2e, "--ginkgo.dry-run", f"--ginkgo.json-report={report}",
                          "--ginkgo.no-color", "--provider=skeleton"],
                         capture_output=True, text=True)
    if out.returncode != 0 or not os.path.exists(report):
        die(f"listing the specs of {e2e} failed:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    with open(report) as fh:
        data = json.load(fh)
    names = []
    for s in data[0]["SpecReports"]:
        if s.get("LeafNodeType") != "It":
            continue
        name = " ".join((s.get("ContainerHierarchyTexts") or []) + [s["LeafNodeText"]])
        names.append(name)
    return names


def select(names, args):
    """The specs to run, and the ones left out with why."""
    chosen, left_out = [], []
    other = set(specs.OTHER_GROUPS)
    found_other = set()
    for name in names:
        if "[sig-api-machinery]" in name:
            why = specs.excluded_tag(name) or specs.skipped(name)
            if why:
                left_out.append((name, why))
                continue
        else:
            bare = name.replace(" [Conformance]", "").replace(" [NodeConformance]", "")
            if bare not in other:
                continue
            found_other.add(bare)
        if args.conformance_only and "[Conformance]" not in name:
            continue
        if args.focus and not re.search(args.focus, name):
            continue
        chosen.append(name)
    missing = other - found_other
    if missing:
        die("these specs of conformance_specs.OTHER_GROUPS are not in the e2e binary (renamed "
            "upstream?):\n  " + "\n  ".join(sorted(missing)))
    return sorted(chosen), left_out


# ---------------------------------------------------------------------------------------------
# The server under test


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A fresh hub or member in a temporary directory, stopped (by PID) on exit."""

    def __init__(self, args, work):
        self.args, self.work, self.proc, self.member_dir = args, work, None, None
        self.kubeconfig = args.kubeconfig
        self.label = "given server"

    def start(self):
        if self.kubeconfig:
            return
        if self.args.member:
            self.start_member()
        else:
            self.start_hub()

    def start_hub(self):
        binary = self.args.flotilla
        if not binary:
            say("building the flotilla binary (cargo build --bin flotilla)")
            if subprocess.run(["cargo", "build", "--locked", "--bin", "flotilla"],
                              cwd=ROOT).returncode != 0:
                die("cargo build failed (its errors are above)")
            binary = os.path.join(ROOT, "target", "debug", "flotilla")
        data = os.path.join(self.work, "hub")
        port = free_port()
        log = open(os.path.join(self.work, "hub.log"), "w")
        self.proc = subprocess.Popen(
            [binary, "serve", "--data-dir", data, "--listen", f"127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.kubeconfig = os.path.join(data, "admin.kubeconfig")
        self.label = "flotilla hub (fresh `flotilla serve`, SQLite)"
        self.wait_ready(lambda: self.proc.poll() is None, os.path.join(self.work, "hub.log"))

    def start_member(self):
        self.member_dir = os.path.join(self.work, "member")
        env = dict(os.environ, MEMBERS_WATCH_CACHE="true", MEMBERS_OWNER_PID=str(os.getpid()))
        if subprocess.run([os.path.join(ROOT, "scripts", "members"), "up", "1", self.member_dir],
                          env=env).returncode != 0:
            die("scripts/members up 1 failed (its messages are above)")
        self.kubeconfig = os.path.join(self.member_dir, "member-1", "kubeconfig")
        self.label = "kube-apiserver (scripts/members up 1, watch cache on)"
        self.wait_ready(lambda: True, None)

    def wait_ready(self, alive, log):
        deadline = time.time() + 120
        while time.time() < deadline:
            if not alive():
                tail = open(log).read()[-3000:] if log else ""
                die(f"the server exited while starting:\n{tail}")
            if os.path.exists(self.kubeconfig):
                ok = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, "get", "--raw",
                                     "/readyz"], capture_output=True, text=True)
                if ok.returncode == 0:
                    return
            time.sleep(0.5)
        die("the server did not answer /readyz within 120 s")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        if self.member_dir:
            subprocess.run([os.path.join(ROOT, "scripts", "members"), "down", self.member_dir],
                           capture_output=True)


# ---------------------------------------------------------------------------------------------
# Running specs


def focus_of(name):
    """A regular expression (RE2) that matches exactly this spec's name (ginkgo matches it
    against the full text, which starts with the empty top container's space)."""
    return r"(^|\s)" + re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", name) + "$"


def run_one(e2e, kubeconfig, work, index, name, timeout):
    report = os.path.join(work, f"spec-{index:03d}.xml")
    log_path = os.path.join(work, f"spec-{index:03d}.log")
    cmd = [e2e, f"--kubeconfig={kubeconfig}", "--provider=skeleton",
           "--allowed-not-ready-nodes=-1", "--num-nodes=0", "--kubectl-path=kubectl",
           f"--ginkgo.focus={focus_of(name)}", f"--ginkgo.timeout={timeout}s",
           f"--ginkgo.junit-report={report}", "--ginkgo.no-color",
           f"--report-dir={os.path.join(work, f'spec-{index:03d}')}"]
    start = time.time()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=work,
                                start_new_session=True)
        try:
            proc.wait(timeout + 60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    took = time.time() - start
    state, reason = judge(report, log_path, name)
    return name, state, reason, took


def judge(report, log_path, name):
    """passed / failed / skipped and the reason, from the spec's JUnit report. A spec whose
    process died (a panic in a goroutine, the hard limit) leaves no report: a failure."""
    if not os.path.exists(report):
        return "failed", "no JUnit report (the process died): " + tail(log_path, 12)
    try:
        root = ET.parse(report).getroot()
    except ET.ParseError as e:
        return "failed", f"unreadable JUnit report: {e}"
    cases = list(root.iter("testcase"))
    suite = [tc for tc in cases if tc.get("name", "").startswith("[Synchronized")]
    # A case is named "[It] <spec name> [<labels>]"; a spec whose name is a prefix of another's
    # must not take the other's case.
    ours = [tc for tc in cases if is_case_of(tc.get("name", ""), name)]
    for tc in suite + ours:
        for tag in ("failure", "error"):
            el = tc.find(tag)
            if el is not None:
                msg = (el.get("message") or el.text or "").strip()
                where = f" (in {tc.get('name', '').split(']')[0]}])" if tc in suite else ""
                return "failed", first_lines(msg, 6) + where
    if not ours:
        return "failed", "the spec is not in the report (renamed upstream?)"
    el = ours[0].find("skipped")
    if el is not None:
        return "skipped", first_lines(el.get("message") or el.text or "", 3)
    return "passed", ""


def is_case_of(case, name):
    rest = case[len("[It] "):] if case.startswith("[It] ") else case
    if not rest.startswith(name):
        return False
    rest = rest[len(name):]
    return rest == "" or rest.startswith(" [")


def first_lines(text, n):
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return " | ".join(lines[:n])[:900]


def tail(path, n):
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return ""
    return " | ".join(ln.strip() for ln in lines[-n:] if ln.strip())[:900]


def run_all(e2e, kubeconfig, work, chosen, args):
    serial = [n for n in chosen if "[Serial]" in n]
    parallel = [n for n in chosen if "[Serial]" not in n]
    results, total, done = [], len(chosen), 0

    def report(r):
        nonlocal done
        done += 1
        name, state, _, took = r
        print(f"[{done:3d}/{total}] {state.upper():7s} {took:5.0f}s  {name}", flush=True)
        results.append(r)

    indexed = {name: i for i, name in enumerate(chosen)}
    with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = [pool.submit(run_one, e2e, kubeconfig, work, indexed[n], n,
                            specs.timeout_for(n, args.spec_timeout)) for n in parallel]
        for j in futures.as_completed(jobs):
            report(j.result())
    for n in serial:
        report(run_one(e2e, kubeconfig, work, indexed[n], n,
                       specs.timeout_for(n, args.spec_timeout)))
    return sorted(results)


def read_known(path):
    if not path:
        return set()
    with open(path) as fh:
        return {ln.strip() for ln in fh if ln.strip() and not ln.startswith("#")}


def summarize(results, known, label, minutes):
    passed = [r for r in results if r[1] == "passed"]
    failed = [r for r in results if r[1] == "failed"]
    skipped = [r for r in results if r[1] == "skipped"]
    conf = [r for r in results if "[Conformance]" in r[0]]
    conf_passed = [r for r in conf if r[1] == "passed"]
    print(f"\n{label}: {len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped of "
          f"{len(results)} ([Conformance]: {len(conf_passed)} of {len(conf)} passed) in "
          f"{minutes:.1f} min")
    new = [r for r in failed if r[0] not in known]
    expected = [r for r in failed if r[0] in known]
    fixed = sorted(n for n in known if any(r[0] == n and r[1] == "passed" for r in results))
    for title, rows in (("failed", new), ("failed as listed in the known failures", expected)):
        if rows:
            print(f"\n{title}:")
            for name, _, reason, _ in rows:
                print(f"  - {name}\n      {reason}")
    if skipped:
        print("\nskipped by the suite itself:")
        for name, _, reason, _ in skipped:
            print(f"  - {name}: {reason}")
    if fixed:
        print("\nlisted as known failures but passed (remove them from the list):")
        for n in fixed:
            print(f"  - {n}")
    return passed, failed, skipped, new, conf, conf_passed


def cpu_model():
    """The CPU's vendor and family as /proc/cpuinfo names it (e.g. "AMD EPYC")."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split()[:2])
    except OSError:
        pass
    return platform.machine()


def record(label, args, counts, minutes):
    passed, failed, skipped, _, conf, conf_passed = counts
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    cpu = cpu_model()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    sel = "[Conformance] only" if args.conformance_only else "full selection"
    with open(os.path.join(ROOT, "BENCHMARKS.md"), "a") as fh:
        fh.write(f"\n## {when} — Conformance (`scripts/conformance`) — commit {commit}"
                 f"{' (with uncommitted changes)' if dirty else ''}\n\n"
                 f"Machine: {os.cpu_count()} cores, {cpu}, {mem:.0f} GiB\n\n"
                 f"Target: {label}; {sel}{', focus ' + args.focus if args.focus else ''}\n\n"
                 "| figure | value |\n|---|---|\n"
                 f"| specs passed / failed / skipped | {len(passed)} / {len(failed)} / "
                 f"{len(skipped)} |\n"
                 f"| [Conformance] specs passed | {len(conf_passed)} of {len(conf)} |\n"
                 f"| wall time, {args.jobs} at once | {minutes:.1f} min |\n")
    say("appended the figures to BENCHMARKS.md")


def main():
    args = parse_args()
    if not shutil.which("kubectl"):
        die("kubectl is not installed: install kubectl 1.27-1.33 and re-run")
    cache = cache_dir()
    e2e = build_e2e(cache)
    work = tempfile.mkdtemp(prefix="flotilla-conformance.")
    server = Server(args, work)
    try:
        chosen, left_out = select(all_specs(e2e, work), args)
        if args.list:
            for n in chosen:
                print(n)
            print(f"\n{len(chosen)} specs; left out of [sig-api-machinery]:")
            for n, why in left_out:
                print(f"  - {n}: {why}")
            return 0
        known = read_known(args.known_failures)
        not_run = []
        if known and not args.run_known:
            not_run = [n for n in chosen if n in known]
            chosen = [n for n in chosen if n not in known]
        if not chosen:
            die("the selection is empty (check --focus)")
        say(f"{len(chosen)} specs selected; starting the server")
        server.start()
        start = time.time()
        results = run_all(e2e, server.kubeconfig, work, chosen, args)
        minutes = (time.time() - start) / 60
        counts = summarize(results, known, server.label, minutes)
        if not_run:
            print(f"\nnot run, listed in {args.known_failures} as known failures:")
            for n in not_run:
                print(f"  - {n}")
        if args.record:
            record(server.label, args, counts, minutes)
        return 1 if counts[3] else 0
    finally:
        server.stop()
        if os.environ.get("CONFORMANCE_KEEP"):
            say(f"kept the logs in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
