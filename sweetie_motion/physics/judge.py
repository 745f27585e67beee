"""
Physics as the judge of stored motions: their verdicts, worked out where there is time (pure).

The static checks (collision, balance, load) are the fast guard every goal passes when it is
planned. The physics (:mod:`sweetie_motion.physics.motion`) says more — does the pony fall,
does a servo hold its stall torque for its overload time — but a motion takes it a good part of
a second: too long to make a goal wait. So a stored motion is judged in a worker thread when it
is saved or imported, or the first time it is played, and the verdict is kept by the motion's
content (its joints, times and values, the speed and direction it is played at, and the
physics it was judged with), in memory and in a file of the storage folder: a later play takes
it at once, a changed motion or robot description is judged again. A play that finds no
verdict yet does not wait for one.
"""

from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
import hashlib
import json
import multiprocessing
import os
from pathlib import Path
import queue
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple, TYPE_CHECKING, Union

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.goal import TrajectoryGoal

if TYPE_CHECKING:
    from sweetie_motion.model.robot_model import RobotModel
    from sweetie_motion.physics.motion import MotionSimulator

#: the verdicts file in the storage folder
VERDICTS_NAME = '.sweetie_motion-physics.json'
#: changes when the verdicts' form changes: older files are ignored
VERDICTS_FORMAT = 'sweetie_motion/physics-verdicts 1'


@dataclass(frozen=True)
class PhysicsVerdict:
    """
    What the physics says of a motion played at a speed and direction.

    :param refused: it falls, or a servo holds its stall torque past its overload time.
    :param findings: each such finding in words, with its time.
    :param summary: one line: stays up or falls, the worst stall, the slip.
    :param seconds: how long judging took [s of CPU].
    """

    refused: bool
    findings: Tuple[str, ...]
    summary: str
    seconds: float = 0.0


def motion_key(goal: TrajectoryGoal, speed: float, backward: bool, physics: str) -> str:
    """Return the key of a verdict: the motion's content, how it is played, the physics."""
    digest = hashlib.sha256()
    digest.update(repr((goal.joints(), [(p.time, tuple(p.positions), tuple(p.velocities))
                                        for p in goal.points])).encode())
    digest.update(repr((round(float(speed), 9), bool(backward), physics)).encode())
    return digest.hexdigest()


def judge_motion(simulator: 'MotionSimulator', name: str, goal: TrajectoryGoal, speed: float = 1.0,
                 backward: bool = False) -> PhysicsVerdict:
    """
    Simulate a stored motion as the controller plays it; return the physics' verdict.

    :param simulator: a :class:`~sweetie_motion.physics.motion.MotionSimulator`.
    :raises GoalError: the controller refuses the motion itself.
    """
    started = time.process_time()
    played = goal.backward() if backward else goal
    motion = simulator.simulate(name, played, speed)
    findings = tuple(motion.findings())
    figures = motion.summary()
    fall = figures['fall']
    stall = (f'longest at stall {figures["stall"]:.2f} s ({figures["stall_servo"]})'
             if figures['stall'] > 0 else 'no servo at stall')
    summary = (f'falls at t = {fall:.2f} s' if fall is not None else 'stays up') + \
        f'; {stall}, slip {figures["slip"] * 1e3:.0f} mm, tilt up to ' \
        f'{figures["tilt"] * 57.2958:.1f} deg'
    return PhysicsVerdict(bool(findings), findings, summary, time.process_time() - started)


#: judges one motion: (name, goal, speed, backward) -> its verdict; close() ends what it holds
Judgement = Union['InProcessJudgement', 'ChildProcessJudgement']


class InProcessJudgement:
    """
    Judges motions in this process (a command, a test): the simulator built at the first.

    :param make_simulator: builds the :class:`~sweetie_motion.physics.motion.MotionSimulator`.
    """

    def __init__(self, make_simulator: Callable[[], 'MotionSimulator']) -> None:
        self._make_simulator = make_simulator
        self._simulator: Optional['MotionSimulator'] = None

    def __call__(self, name: str, goal: TrajectoryGoal, speed: float,
                 backward: bool) -> PhysicsVerdict:
        """Judge one motion; see :func:`judge_motion`."""
        if self._simulator is None:
            self._simulator = self._make_simulator()
        return judge_motion(self._simulator, name, goal, speed, backward)

    def close(self) -> None:
        """Nothing to end."""


class ChildProcessJudgement:
    """
    Judges motions in a process of its own, started at the first motion and ended with this.

    The physics is a Python loop of some thousand steps a motion: in the motion process it
    would hold the interpreter's lock from the threads that must answer in milliseconds (the
    servo lines, the executor). The child builds the robot from the same description (the
    file, and the URDF given instead of its own), runs at a lower priority and ends with the
    thread that started it (the judge's worker).

    :param robot: the robot description file; :param urdf_xml: the URDF used instead of the
        file's ('': the file's).
    """

    def __init__(self, robot: str, urdf_xml: str = '') -> None:
        self._recipe = (str(robot), urdf_xml)
        self._pool: Optional[ProcessPoolExecutor] = None

    def __call__(self, name: str, goal: TrajectoryGoal, speed: float,
                 backward: bool) -> PhysicsVerdict:
        """Judge one motion in the child; see :func:`judge_motion`."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn'),
                                             initializer=_child_started)
        try:
            return self._pool.submit(_judge_in_child, self._recipe, name, goal, speed,
                                     backward).result()
        except BrokenProcessPool as error:
            self._pool = None   # the child died (killed, out of memory): a new one next time
            raise OSError(f'the physics process ended: {error}') from error

    def close(self) -> None:
        """End the child (a motion being judged is abandoned)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


#: the child's simulators, by (robot description file, URDF)
_CHILD_SIMULATORS: Dict[Tuple[str, str], 'MotionSimulator'] = {}


def _child_started() -> None:
    """Lower the child's priority; have it end when the thread that started it ends."""
    try:
        os.nice(10)
    except OSError:
        pass
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass   # not Linux: the pool's own shutdown ends it


def _judge_in_child(recipe: Tuple[str, str], name: str, goal: TrajectoryGoal, speed: float,
                    backward: bool) -> PhysicsVerdict:
    simulator = _CHILD_SIMULATORS.get(recipe)
    if simulator is None:
        from sweetie_motion.model.description import load_robot_description
        from sweetie_motion.physics.motion import MotionSimulator
        model = load_robot_description(recipe[0], recipe[1])
        model.configure()
        simulator = _CHILD_SIMULATORS[recipe] = MotionSimulator(model)
    return judge_motion(simulator, name, goal, speed, backward)


class PhysicsJudge:
    """
    The verdicts of stored motions, judged one at a time in a worker thread (thread-safe).

    :param judgement: judges one motion (name, goal, speed, backward) -> its verdict:
        :class:`InProcessJudgement` or :class:`ChildProcessJudgement`.
    :param physics: names the physics the verdicts hold for (its settings and servo models):
        a verdict of another physics is not taken.
    :param log: told of each verdict and of failures (one line each).
    """

    def __init__(self, judgement: 'Judgement', physics: str,
                 log: Callable[[str], None] = lambda line: None) -> None:
        self._judgement = judgement
        self.physics = physics
        self._log = log
        self._verdicts: Dict[str, PhysicsVerdict] = {}
        self._pending: Dict[str, Tuple[str, TrajectoryGoal, float, bool]] = {}
        self._queue: 'queue.SimpleQueue[Optional[str]]' = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._file: Optional[Path] = None
        self._thread: Optional[threading.Thread] = None
        self._closed = False

    # --- verdicts ----------------------------------------------------------------------------

    def verdict(self, goal: TrajectoryGoal, speed: float = 1.0,
                backward: bool = False) -> Optional[PhysicsVerdict]:
        """Return the verdict of a motion played so, None when there is none (yet)."""
        with self._lock:
            return self._verdicts.get(motion_key(goal, speed, backward, self.physics))

    def submit(self, name: str, goal: TrajectoryGoal, speed: float = 1.0,
               backward: bool = False) -> bool:
        """
        Have a motion judged in the worker (unless its verdict is known or waits already).

        :return: whether it was queued.
        """
        key = motion_key(goal, speed, backward, self.physics)
        with self._lock:
            if self._closed or key in self._verdicts or key in self._pending:
                return False
            self._pending[key] = (name, goal, float(speed), bool(backward))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name='physics_judge',
                                                daemon=True)
                self._thread.start()
        self._queue.put(key)
        return True

    def pending(self) -> int:
        """Return how many motions wait for their verdict."""
        with self._lock:
            return len(self._pending)

    def wait(self, timeout: float) -> bool:
        """Wait until no motion waits for its verdict; return whether none does [s]."""
        deadline = time.monotonic() + timeout
        while self.pending() and time.monotonic() < deadline:
            time.sleep(0.02)
        return not self.pending()

    def close(self) -> None:
        """End the worker and its judgement (a motion being judged is abandoned)."""
        with self._lock:
            self._closed = True
        self._queue.put(None)
        self._judgement.close()
        if self._thread is not None:
            # a shutdown does not wait for a judgement (its child ends with the process)
            self._thread.join(0.5)

    # --- the verdicts file -------------------------------------------------------------------

    def use_file(self, path: Path) -> None:
        """Keep the verdicts in ``path`` too; take those it holds (a broken file is ignored)."""
        self._file = Path(path)
        try:
            document = json.loads(self._file.read_text(encoding='utf-8'))
        except (OSError, ValueError):
            return
        if not isinstance(document, dict) or document.get('format') != VERDICTS_FORMAT:
            return
        taken = {}
        for key, fields in (document.get('verdicts') or {}).items():
            try:
                taken[key] = PhysicsVerdict(bool(fields['refused']),
                                            tuple(str(f) for f in fields['findings']),
                                            str(fields['summary']), float(fields['seconds']))
            except (KeyError, TypeError, ValueError):
                continue
        with self._lock:
            self._verdicts.update(taken)

    def _write(self) -> None:
        if self._file is None:
            return
        with self._lock:
            verdicts = {key: asdict(v) for key, v in self._verdicts.items()}
        from sweetie_motion.storage.files import write_atomically
        try:
            write_atomically(str(self._file), json.dumps(
                {'format': VERDICTS_FORMAT, 'verdicts': verdicts}, indent=0))
        except OSError as error:
            self._log(f'physics verdicts not written to {self._file}: {error}')

    # --- the worker ----------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            key = self._queue.get()
            if key is None:
                return
            with self._lock:
                job = self._pending.get(key)
            if job is None:
                continue
            name, goal, speed, backward = job
            try:
                verdict = self._judgement(name, goal, speed, backward)
            except (SweetieMotionError, ValueError, OSError) as error:
                verdict = None
                self._log(f'physics: {name!r} not judged: {error}')
            except Exception as error:  # noqa: B902 -- a failed judgement must not end the judge
                verdict = None
                self._log(f'physics: {name!r} not judged: {type(error).__name__}: {error}')
            with self._lock:
                self._pending.pop(key, None)
                if verdict is not None:
                    self._verdicts[key] = verdict
            if verdict is not None:
                self._log(f'physics: {name!r}' + (f' at speed {speed:g}' if speed != 1 else '')
                          + (' backward' if backward else '') + f': {verdict.summary}'
                          + ('; ' + '; '.join(verdict.findings) if verdict.findings else '')
                          + f' ({verdict.seconds:.2f} s)')
                self._write()


def physics_key(robot: 'RobotModel') -> str:
    """Return what names a robot's physics: its settings and its servo models file's content."""
    settings = getattr(robot, 'physics_settings', None)
    parts: List[str] = [repr(settings)]
    models = getattr(settings, 'servo_models', '') if settings is not None else ''
    for path in (models,):
        if path and os.path.exists(path):
            parts.append(hashlib.sha256(Path(path).read_bytes()).hexdigest())
    checks = getattr(robot, 'check_settings', None)
    parts.append(repr(getattr(checks, 'overload_time', None)))
    return hashlib.sha256('|'.join(parts).encode()).hexdigest()[:16]
