#!/usr/bin/env python3
"""
Two bringups started at the same instant in one namespace: exactly one may run (#38 item 5).

Each pair starts two `sweetie-motion bringup --namespace race --no-autostart` together; the
pair counts as refused when one of them exits with code 1 saying "a motion process already
runs in /race", naming the other's pid, while the other gets to "motion process ready" and
ends cleanly on Ctrl+C. 50 pairs by default (``--pairs N``); the figure is refused / pairs.
Runs on a ROS domain of its own (``ROS_DOMAIN_ID``, default 157) with discovery on this machine.
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List, NamedTuple, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from targets import Targets  # noqa: E402  (bench/ is not a package)

#: how long a bringup may take to refuse or to be ready on a loaded 2-core machine [s]
START_TIMEOUT = 120.0


class PairOutcome(NamedTuple):
    """What one pair of simultaneous bringups did."""

    refused: bool           # exactly one refused, naming the other, and the other ran
    note: str               # what went wrong otherwise
    refusal_seconds: float  # from the start to the refused one's exit


class Bringup:
    """One `sweetie-motion bringup` in ``namespace``, its output in a file."""

    def __init__(self, namespace: str, env: dict) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix='race-', suffix='.log', delete=False)
        self.popen = subprocess.Popen(
            [sys.executable, '-m', 'sweetie_motion.cli', 'bringup', '--namespace', namespace,
             '--no-autostart'], stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)

    def output(self) -> str:
        self.log.flush()
        with open(self.log.name, encoding='utf-8', errors='replace') as stream:
            return stream.read()

    def stop(self) -> Optional[int]:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)
        os.unlink(self.log.name)
        return self.popen.returncode


def race(namespace: str = 'race', env: Optional[dict] = None) -> PairOutcome:
    """Start two bringups at once in ``namespace``; return whether exactly one ran."""
    env = dict(os.environ if env is None else env)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    started = time.monotonic()
    pair = [Bringup(namespace, env), Bringup(namespace, env)]
    try:
        deadline = started + START_TIMEOUT
        while all(b.popen.poll() is None for b in pair) and time.monotonic() < deadline:
            time.sleep(0.02)
        ended = [b for b in pair if b.popen.poll() is not None]
        if not ended:
            return PairOutcome(False, 'neither refused', 0.0)
        refusal = time.monotonic() - started
        if len(ended) == 2:
            return PairOutcome(False, 'both ended: ' + ' | '.join(
                b.output().strip().splitlines()[-1:][0] if b.output().strip() else '(silent)'
                for b in pair), refusal)
        loser = ended[0]
        winner = pair[1] if loser is pair[0] else pair[0]
        said = loser.output()
        if loser.popen.returncode != 1 or \
                f'a motion process already runs in /{namespace}' not in said or \
                not re.search(rf'pid {winner.popen.pid}\b', said):
            return PairOutcome(False, f'exit {loser.popen.returncode}: {said.strip()[-300:]}',
                               refusal)
        while 'motion process ready' not in winner.output():
            if winner.popen.poll() is not None or time.monotonic() > deadline:
                return PairOutcome(False, f'the other did not run: {winner.output()[-300:]}',
                                   refusal)
            time.sleep(0.05)
        return PairOutcome(True, '', refusal)
    finally:
        codes = [b.stop() for b in pair]
        if any(code not in (0, 1) for code in codes):
            print(f'  (exit codes {codes})', file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    """Run the pairs; print the figure; return the number of targets missed."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--pairs', type=int, default=50)
    args = parser.parse_args(argv)
    os.environ.setdefault('ROS_DOMAIN_ID', '157')
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    outcomes = []
    for k in range(args.pairs):
        outcome = race()
        outcomes.append(outcome)
        print(f'pair {k + 1:2d}: {"refused" if outcome.refused else "NOT refused"} after '
              f'{outcome.refusal_seconds:.2f} s {outcome.note}', flush=True)
    refused = sum(o.refused for o in outcomes)
    seconds = [o.refusal_seconds for o in outcomes if o.refused]
    print(f'second bringup refused in {refused} of {len(outcomes)} simultaneous starts; '
          f'refused after p50 {statistics.median(seconds) if seconds else 0:.2f} s')
    targets = Targets('one motion process per namespace')
    targets.check('simultaneous second bringup refused', f'{refused}/{len(outcomes)}',
                  f'{len(outcomes)}/{len(outcomes)}', refused == len(outcomes))
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
