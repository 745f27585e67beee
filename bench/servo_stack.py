"""
The whole stack on the pty simulators: quiet, with commands typed beside it, with plain load.

Used by ``bench/servo_bus.py --stack``: ``sweetie-motion bringup --bus sim-serial`` (the
package's simulator, faults on every line: 5 % corrupted and 1 % dropped replies) on the pony's
three lines at one baud rate, for ``seconds``, with one of three loads beside it:

- ``None``: nothing;
- ``'commands'``: another process runs ``servo status``, ``servo scan``, ``play nod``,
  ``status`` and ``list`` in a loop;
- ``'cpu'``: busy loops at normal priority, as many as the commands' loop kept cores busy
  (the machine's busy cores with the commands minus without; at least one): the same CPU
  load with nothing of ROS or of the robot in it, which tells what the commands do to the
  lines beyond taking CPU time.

The figures are the driver's own, from ``/diagnostics``, measured from the end of the start-up
(``servo_bus`` ``reset_statistics``): per line the measurement age p50 / p99 / max and how
long after the cycle handed its goals over the line thread ran (p99 / max).
"""

import os
import random
import signal
import subprocess
import sys
import tempfile
import time

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from sweetie_motion.servo.sim.process import SIM_PRIORITY  # noqa: E402

PONY = os.path.join(ROOT, 'config', 'sweetie_bot_servos.yaml')
FAULTS = ('corrupt-reply=0.05', 'drop=0.01')
NS = 'bench_servos'
RUNS = 0
#: the commands a person types beside it, in a loop
COMMANDS = (('servo', 'status'), ('servo', 'scan'), ('play', 'nod'), ('status',), ('list',))

PROCESS_CONFIG = """\
sweetie_motion:
  namespace: {ns}
  robot: sweetie_bot.yaml
  period: 0.01
  components:
    - name: servo_bus
      type: herkulex_bus
      parameters:
        mode: sim-serial
        config: {servos}
        sim: {sim}
    - name: trajectory_storage
      type: trajectory_storage{storage}
    - name: torque_main_switch
      type: torque_main_switch
      parameters:
        controlled_chains: [leg1, leg2, leg3, leg4, head, nose, eyes]
    - name: joint_trajectory
      type: joint_trajectory
      parameters:
        controlled_chains: [leg1, leg2, leg3, leg4, head, nose, eyes]
        play_action: play_trajectory
"""


def pony_process_config(ns, servos, sim, storage_dir=None, extra=''):
    """
    Return the text of a motion process config: the pony on simulated serial servos.

    :param sim: the ``sim`` parameters of the servo bus, as YAML flow text.
    :param storage_dir: the trajectory storage's folder (None: its default).
    :param extra: more components, as YAML text indented as the others.
    """
    storage = f'\n      parameters: {{storage_dir: {storage_dir}}}' if storage_dir else ''
    return PROCESS_CONFIG.format(ns=ns, servos=servos, sim=sim, storage=storage) + extra


def cli_command(*args):
    """Return the command line of ``sweetie-motion ARGS`` with this Python."""
    return [sys.executable, '-m', 'sweetie_motion.cli', *args]


def stop_bringup(bringup):
    """Stop a bringup as Ctrl+C would; kill it if it has not ended in 30 s."""
    bringup.send_signal(signal.SIGINT)
    try:
        bringup.wait(30)
    except subprocess.TimeoutExpired:
        bringup.kill()


def _with_namespace(command, ns):
    return cli_command(*command, '--namespace', ns)


def _machine_cpu():
    """Return the machine's busy and total CPU time so far [jiffies] (all cores)."""
    with open('/proc/stat') as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]   # idle, iowait
    return sum(fields) - idle, sum(fields)


def _load_script(load, ns, cores):
    if load == 'commands':
        # each command's place in COMMANDS and its time from its start to its end, in ms
        return '; '.join(
            't=$(date +%s%N); ' + ' '.join(_with_namespace(c, ns)) + ' >/dev/null 2>&1; '
            f'echo "done {k} $(( ($(date +%s%N) - t) / 1000000 ))"'
            for k, c in enumerate(COMMANDS))
    return ' & '.join(['(while :; do :; done)'] * cores) + '; wait'


def _command_times(out):
    """Return {command: [its times, s]} from the command loop's output."""
    times = {' '.join(c): [] for c in COMMANDS}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == 'done':
            times[' '.join(COMMANDS[int(parts[1])])].append(int(parts[2]) / 1000.0)
    return times


def run_stack(baud, seconds, load, directory, cores=1, sim_priority=SIM_PRIORITY):
    """
    Run the stack at ``baud`` for ``seconds`` beside ``load`` (None, 'commands' or 'cpu').

    :param cores: the busy loops of the ``'cpu'`` load.
    :param sim_priority: the simulators' real-time priority (``sim.priority``).
    :return: {line: figures [ms]}, {command: the times it took [s]} (empty without
        commands), the cores the machine kept busy meanwhile (the stack's own and the load's).
    """
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from sweetie_motion_msgs.srv import ServoCommand
    servos = os.path.join(directory, f'servos_{baud}.yaml')
    with open(PONY) as source, open(servos, 'w') as out:
        # the lines lose 6 % of the replies from the first frame on, the connect's included:
        # with three tries a connect missed a servo about once in 30 starts
        out.write(source.read().replace('baud: 115200', f'baud: {baud}')
                  .replace('servo_bus:\n', 'servo_bus:\n  retries: 6\n', 1))
    global RUNS
    RUNS += 1
    ns = f'{NS}{RUNS}'   # each run its own names: nothing of a previous one is taken for it
    config = os.path.join(directory, f'process_{baud}.yaml')
    with open(config, 'w') as out:
        faults = ', '.join(f"'{f}'" for f in FAULTS)
        out.write(pony_process_config(
            ns, servos, f'{{faults: [{faults}], seed: 1, priority: {sim_priority}}}'))
    log = open(os.path.join(directory, f'bringup_{baud}_{load}.log'), 'w')
    bringup = subprocess.Popen(cli_command('bringup', '--config', config, '--namespace', ns),
                               stdout=log, stderr=subprocess.STDOUT)
    loop = None
    rclpy.init()
    node = rclpy.create_node('servo_bench')
    latest = {}

    def on_diagnostics(msg):
        for status in msg.status:
            if status.name.startswith(f'{ns}: servo bus '):
                latest[status.name.rsplit(' ', 1)[1]] = {v.key: v.value for v in status.values}
    node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
    client = node.create_client(ServoCommand, f'/{ns}/servo_bus/command')

    def spin_until(condition, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
            if condition():
                return True
        return False
    try:
        if not spin_until(lambda: client.service_is_ready() and len(latest) == 3, 240):
            log.flush()
            with open(log.name) as text:
                tail = text.read()[-2000:]
            raise RuntimeError(f'the bringup did not come up in 240 s:\n{tail}')
        spin_until(lambda: False, 2.0)   # the lines settle after the start-up
        future = client.call_async(ServoCommand.Request(command='reset_statistics'))
        spin_until(future.done, 10)
        typed = _command_times('')
        cpu = _machine_cpu()
        if load:
            loop = subprocess.Popen(
                ['bash', '-c', f'while true; do {_load_script(load, ns, cores)}; done'],
                stdout=subprocess.PIPE, text=True, start_new_session=True)
        started = time.monotonic()
        spin_until(lambda: time.monotonic() - started > seconds, seconds + 5)
        if loop is not None:
            os.killpg(loop.pid, signal.SIGTERM)
            out, _ = loop.communicate(timeout=10)
            typed = _command_times(out)
        busy_end, total_end = _machine_cpu()
        busy = (busy_end - cpu[0]) / max(1, total_end - cpu[1]) * os.cpu_count()
        seen = time.monotonic()
        stamp = {k: dict(v) for k, v in latest.items()}
        # the next diagnostics: what the lines saw up to the end
        spin_until(lambda: time.monotonic() - seen > 1.2, 3.0)
        stamp = {k: dict(v) for k, v in latest.items()} or stamp
    finally:
        if loop is not None and loop.poll() is None:
            os.killpg(loop.pid, signal.SIGKILL)
        node.destroy_node()
        rclpy.try_shutdown()
        stop_bringup(bringup)
        log.close()
    figures = {line: {key: float(values[key]) for key in (
        'age_p50_ms', 'age_p99_ms', 'age_max_ms', 'wake_p99_ms', 'wake_max_ms')}
        for line, values in stamp.items()}
    return figures, typed, busy


def run_loads(baud, seconds, directory, sim_priority=SIM_PRIORITY):
    """
    Run the stack quiet, beside the commands, then beside as many busy loops as they took.

    :return: per load, (load, busy loops of the 'cpu' load, figures, the commands' times, busy
        cores).
    """
    cores, quiet = 1, 0.0
    for load in (None, 'commands', 'cpu'):
        figures, typed, busy = run_stack(baud, seconds, load, directory, cores, sim_priority)
        if load is None:
            quiet = busy
        elif load == 'commands':
            cores = max(1, round(busy - quiet))
        yield load, cores, figures, typed, busy


def main():
    """Run it once at each baud rate quiet, with commands, with their CPU load; print."""
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    with tempfile.TemporaryDirectory(prefix='servo_stack_') as directory:
        for baud in (666666, 115200):
            for load, _, figures, typed, busy in run_loads(baud, seconds, directory):
                print(baud, load or 'quiet', typed, f'{busy:.2f} cores', figures, flush=True)


if __name__ == '__main__':
    main()
