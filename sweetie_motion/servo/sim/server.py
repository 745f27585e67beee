"""
A bus simulator behind a pseudo-terminal, served in real time (what ``servo-sim`` runs).

:class:`PtyServer` opens a pty (``os.openpty``, raw mode), feeds what the master writes to a
:class:`~sweetie_motion.servo.sim.line.BusSimulator` with the time it was read, and writes
the reply bytes whose wire time has passed. Replies leave the pty in chunks at most every
``chunk`` s (default 0.5 ms, as a USB adapter's packets; never early). It also serves the
control channel (a UNIX stream socket speaking JSON lines, one request object per line, one
answer per line):

* ``{"op": "state"}``: servos, counters, sample gaps, the server's lateness, time;
* ``{"op": "move", "positions": {ID: rad}}``: moved by hand (only servos with the torque off or
  braking move; answers the moved IDs);
* ``{"op": "external_torque", "torques": {ID: N*m}}``;
* ``{"op": "fault", "spec": "jam=11"}``: the ``--fault`` grammar, times counted from now;
* ``{"op": "close", "reopen": s}``: the port closes now (as an unplugged USB adapter);
* ``{"op": "reset_statistics"}``: the sample gaps and the lateness start again.
"""

from dataclasses import replace
import json
import math
import os
import select
import socket
import time
import tty
from typing import Callable, Dict, Optional, Sequence, Tuple

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.servo.freshness import AgeHistogram
from sweetie_motion.servo.sim.faults import parse_fault
from sweetie_motion.servo.sim.line import BusSimulator


class PtyServer:
    """
    Serves a :class:`BusSimulator` behind a pseudo-terminal in real time.

    :param sim: the simulator (its ``start`` should be the monotonic time of now).
    :param link: a symlink path that points at the current pty (kept when the port reopens).
    :param control: a UNIX socket path for the control channel.
    :param clock: the time source.
    :param chunk: reply bytes are written at most this often [s] (a USB adapter delivers
        packets, not bytes; the bytes are never early, only grouped).
    """

    def __init__(self, sim: BusSimulator, link: Optional[str] = None,
                 control: Optional[str] = None,
                 clock: Callable[[], float] = time.monotonic, chunk: float = 0.0005) -> None:
        self.sim = sim
        self.chunk = float(chunk)
        self._last_write = -math.inf
        self.link = link
        self.control_path = control
        self.clock = clock
        self.path = ''
        self._master: Optional[int] = None
        self._slave: Optional[int] = None
        self._listener: Optional[socket.socket] = None
        self._clients: Dict[int, Tuple[socket.socket, bytearray]] = {}
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._stop = False
        self._reopen_at = math.inf
        self.overflow_bytes = 0
        #: how late the loop woke after its timeouts [s]: the simulator knows when a request
        #: arrived only from when it read it, so a request it read late looks late
        self.lateness = AgeHistogram()

    def start(self) -> str:
        """Open the pty (and the control socket); return the path to give the master."""
        self._open_pty()
        if self.control_path:
            try:
                os.unlink(self.control_path)
            except FileNotFoundError:
                pass
            self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._listener.bind(self.control_path)
            self._listener.listen(4)
            self._listener.setblocking(False)
        return self.link or self.path

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        if self.link:
            temporary = f'{self.link}.{os.getpid()}.tmp'
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
            os.symlink(self.path, temporary)
            os.replace(temporary, self.link)

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None
        self.sim.discard_output()

    def stop(self) -> None:
        """Ask :meth:`serve` to return (thread-safe, signal-safe)."""
        self._stop = True
        try:
            os.write(self._wake_w, b'x')
        except OSError:
            pass

    def serve(self) -> None:
        """Serve until :meth:`stop`."""
        sim = self.sim
        while not self._stop:
            now = self.clock()
            due = sim.next_event_time()
            if sim.has_output():
                due = max(due, self._last_write + self.chunk)
            wake = min(due, now + 0.01, self._reopen_at,
                       sim.port_events[0][0] if sim.port_events else math.inf)
            readers = [self._wake_r]
            if self._master is not None:
                readers.append(self._master)
            if self._listener is not None:
                readers.append(self._listener.fileno())
            readers += list(self._clients)
            try:
                ready, _, _ = select.select(readers, [], [], max(0.0, wake - now))
            except InterruptedError:
                continue
            now = self.clock()
            if not ready:
                # woke by the timeout: how late tells how far the simulator's time may lag
                self.lateness.add(now - wake)
            if self._wake_r in ready:
                os.read(self._wake_r, 64)
            if self._master is not None and self._master in ready:
                try:
                    data = os.read(self._master, 65536)
                except (BlockingIOError, InterruptedError):
                    data = b''
                except OSError:
                    data = b''   # no master side open on the slave: nothing came
                sim.receive(data, now)
            sim.advance(now)
            out = sim.transmit(now) if now >= self._last_write + self.chunk else b''
            if out and self._master is not None:
                self._last_write = now
                try:
                    os.write(self._master, out)
                except (BlockingIOError, OSError):
                    self.overflow_bytes += len(out)
            if self._listener is not None:
                self._serve_control(ready)
            self._port_faults(now)
        self.close()

    def _port_faults(self, now: float) -> None:
        events = self.sim.port_events
        while events and events[0][0] <= now:
            _, reopen = events.pop(0)
            self._close_pty()
            if self.link:
                try:
                    os.unlink(self.link)
                except FileNotFoundError:
                    pass
            self._reopen_at = now + reopen
        if now >= self._reopen_at:
            self._reopen_at = math.inf
            self._open_pty()

    def _serve_control(self, ready: Sequence[int]) -> None:
        listener = self._listener
        assert listener is not None  # called only while the control socket is open
        if listener.fileno() in ready:
            try:
                client, _ = listener.accept()
                client.setblocking(False)
                self._clients[client.fileno()] = (client, bytearray())
            except BlockingIOError:
                pass
        for fd in [fd for fd in ready if fd in self._clients]:
            client, buffer = self._clients[fd]
            try:
                data = client.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b''
            if not data:
                client.close()
                del self._clients[fd]
                continue
            buffer += data
            while b'\n' in buffer:
                line, _, rest = bytes(buffer).partition(b'\n')
                buffer[:] = rest
                answer = self._control(line)
                try:
                    client.setblocking(True)
                    client.sendall(json.dumps(answer).encode() + b'\n')
                    client.setblocking(False)
                except OSError:
                    pass

    def _control(self, line: bytes) -> Dict[str, object]:
        sim = self.sim
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError('a request is a JSON object')
            op = request.get('op')
            sim.advance(self.clock())
            if op == 'state':
                answer = sim.snapshot()
                answer['path'] = self.path
                answer['port_open'] = self._master is not None
                answer['lateness'] = self.lateness.summary().as_dict()
                answer['lateness']['over_5ms'] = self.lateness.count_above(0.005)
                return answer
            if op == 'move':
                return {'moved': sim.move_by_hand({int(k): float(v) for k, v in
                                                   dict(request['positions']).items()})}
            if op == 'external_torque':
                sim.set_external_torque({int(k): float(v) for k, v in
                                         dict(request['torques']).items()})
                return {'ok': True}
            if op == 'fault':
                plan = parse_fault(str(request['spec']))
                offset = sim.now - sim.start
                for event in plan.events:
                    sim.schedule_fault(event, offset)
                if plan.corrupt or plan.drop or plan.late or plan.corrupt_reply:
                    sim.faults = sim.faults.merged(replace(plan, events=()))
                return {'ok': True}
            if op == 'reset_statistics':
                sim.sample_gaps.reset()
                self.lateness.reset()
                return {'ok': True}
            if op == 'close':
                sim.port_events.append((self.clock(), float(request.get('reopen', math.inf))))
                sim.port_events.sort()
                return {'ok': True}
            raise ValueError(f'unknown op {op!r} (state, move, external_torque, fault, close, '
                             'reset_statistics)')
        except (ValueError, KeyError, TypeError, SweetieMotionError) as error:
            return {'error': str(error)}

    def close(self) -> None:
        """Close the pty, the control socket and the link."""
        self._close_pty()
        for client, _ in self._clients.values():
            client.close()
        self._clients.clear()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            try:
                if self.control_path is not None:
                    os.unlink(self.control_path)
            except FileNotFoundError:
                pass
        if self.link:
            try:
                if os.path.islink(self.link):
                    os.unlink(self.link)
            except OSError:
                pass
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1
