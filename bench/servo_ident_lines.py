#!/usr/bin/env python3
"""
Servo identification per line through the whole stack: each line's delay against one for all.

    .venv/bin/python bench/servo_ident_lines.py [--bauds 115200 666666] [--runs N]

For each baud rate it starts ``sweetie-motion bringup --bus sim-serial`` on the pony's three
lines (``config/sweetie_bot_servos.yaml``: 10 + 10 + 4 servos, the package's simulator) with
the ``servo_ident`` component, runs ``sweetie-motion servo identify`` on all 24 servos from
another process, and prints per line: the control delay the identification used, how many
servos got a model (identified / refused / above the threshold / no samples) and the viscous
friction found against the simulated servo's. Twice: with ``control_delay_from_bus`` true
(each line's delay from the driver's schedule) and false (``control_delay`` 2.5 cycles for
every servo, the one delay of before).

Targets, with each line's own delay: every servo of every line identified, and each line's
median viscous friction within 15 % of the simulated servos' (a delay 4 ms off moves it by
about 20 %).
"""

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

# the stack's DDS stays on this machine, on a domain of its own, unless told otherwise
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from servo_stack import cli_command, pony_process_config, stop_bringup  # noqa: E402
from sweetie_motion.servo import driver as sb  # noqa: E402
from sweetie_motion.servo.servo_model import default_params  # noqa: E402
import yaml  # noqa: E402

PONY = os.path.join(ROOT, 'config', 'sweetie_bot_servos.yaml')
#: the one delay of before: ``servo_ident``'s ``control_delay`` [cycles]
ONE_DELAY = 2.5
#: a line's median viscous friction within this of the simulated servos' (see the module)
MEDIAN_TOLERANCE = 0.15

#: the identification, as the process config's last component
SERVO_IDENT = """\
    - name: servo_ident
      type: servo_ident
      parameters:
        models_file: {models}
        control_delay_from_bus: {from_bus}
        control_delay: {delay}
"""

#: '  joint11: 444 samples, prediction error 0.0022 rad: identified' or '  joint11: no samples: ..'
SERVO_LINE = re.compile(r'^  (\w+): (?:(\d+) samples, prediction error [\d.]+ rad: )?(.*)$')


def identify(baud, from_bus, directory, run):
    """
    Run the stack at ``baud``, identify every servo; return (delays, outcomes, models, output).

    :return: {line: delay text}, {joint: outcome}, {joint: identified alpha}, the command's
        output (for a failure's report).
    """
    ns = f'ident_lines{run}'
    servos = os.path.join(directory, f'servos_{baud}.yaml')
    with open(PONY) as source, open(servos, 'w') as out:
        out.write(source.read().replace('baud: 115200', f'baud: {baud}'))
    models = os.path.join(directory, f'identified_{ns}.yaml')
    config = os.path.join(directory, f'process_{ns}.yaml')
    with open(config, 'w') as out:
        out.write(pony_process_config(
            ns, servos, '{seed: 1}', storage_dir=os.path.join(directory, f'store_{ns}'),
            extra=SERVO_IDENT.format(models=models, from_bus='true' if from_bus else 'false',
                                     delay=ONE_DELAY)))
    log = open(os.path.join(directory, f'bringup_{ns}.log'), 'w')
    bringup = subprocess.Popen(cli_command('bringup', '--config', config, '--namespace', ns),
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while True:
            # 'servo status' answers once the driver and its command service are up
            ready = subprocess.run(
                cli_command('servo', 'status', '--namespace', ns, '--timeout', '5'),
                capture_output=True, text=True)
            if ready.returncode == 0:
                break
            if bringup.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f'the bringup did not come up: {ready.stderr[-500:]}')
            time.sleep(1.0)
        done = subprocess.run(cli_command('servo', 'identify', '--namespace', ns, '--png',
                                          os.path.join(directory, f'{ns}.png')),
                              capture_output=True, text=True, timeout=600)
    finally:
        stop_bringup(bringup)
        log.close()
    output = done.stdout + done.stderr
    delays = dict(re.findall(r'(\w+) ([\d.]+ ms) \(\d+ servo', output))
    outcomes = {}
    for line in done.stdout.splitlines():
        match = SERVO_LINE.match(line)
        if match:
            outcomes[match.group(1)] = match.group(3)
    identified = {}
    if os.path.exists(models):
        with open(models) as text:
            identified = {m['name']: m['alpha'] for m in
                          (yaml.safe_load(text) or {}).get('servo_models', [])}
    return delays, outcomes, identified, output


def outcome_kind(outcome):
    """Return the outcome's kind: identified, refused, above the threshold or no samples."""
    for kind in ('identified', 'refused', 'above the threshold', 'no samples'):
        if outcome.startswith(kind):
            return kind
    return 'other'


def main():
    """Identify at each baud rate with each line's delay and with one; print; judge."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--bauds', type=int, nargs='+', default=[115200, 666666])
    parser.add_argument('--runs', type=int, default=1, help='runs of each setting')
    args = parser.parse_args()
    from targets import Targets
    targets = Targets('servo identification per line, #39')
    buses = sb.load_bus_config_file(PONY).buses
    run = 0
    with tempfile.TemporaryDirectory(prefix='servo_ident_lines_') as directory:
        for baud in args.bauds:
            for from_bus in (True, False):
                for repeat in range(args.runs):
                    run += 1
                    delays, outcomes, identified, output = identify(baud, from_bus, directory,
                                                                    run)
                    setting = 'each line its delay' if from_bus else \
                        f'one delay, {ONE_DELAY:g} cycles'
                    print(f'{baud} Bd, {setting}, run {repeat + 1}:')
                    for bus in buses:
                        joints = [s.joint for s in bus.servos]
                        kinds = [outcome_kind(outcomes.get(j, 'no line')) for j in joints]
                        ratios = [identified[s.joint][0] / default_params(s.servo_type).alpha[0]
                                  for s in bus.servos if s.joint in identified]
                        median = statistics.median(ratios) if ratios else float('nan')
                        counts = ', '.join(f'{kinds.count(k)} {k}' for k in (
                            'identified', 'refused', 'above the threshold', 'no samples',
                            'other') if kinds.count(k))
                        spread = (f'{min(ratios):.2f}-{max(ratios):.2f}' if ratios else '-')
                        print(f'  {bus.name}: delay {delays.get(bus.name, "(one for all)")}; '
                              f'{counts}; viscous friction / simulated: median {median:.2f}, '
                              f'{spread}', flush=True)
                        for joint, kind in zip(joints, kinds):
                            if kind != 'identified':
                                print(f'    {joint}: {outcomes.get(joint, "no line")}')
                        if from_bus:
                            key = f'{baud} Bd, run {repeat + 1}, {bus.name}'
                            targets.check(f'{key}: servos identified',
                                          f'{kinds.count("identified")} of {len(joints)}',
                                          f'{len(joints)}', kinds.count('identified') == len(
                                              joints))
                            targets.check(f'{key}: median viscous friction / simulated',
                                          f'{median:.2f}', f'1 +- {MEDIAN_TOLERANCE:g}',
                                          abs(median - 1) <= MEDIAN_TOLERANCE)
                    if not outcomes:
                        print('  the command said:\n' + output[-1500:])
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
