"""
One motion process per robot namespace and ROS domain on this machine, for certain.

A second bringup in a namespace in use would take the first's topics, actions and goals. The
graph check of the bringup (is a ``motion`` node there?) needs discovery, which takes a second
or more: two bringups started within that time both saw nobody (2 of 10 such starts ran
twice). This lock has no such window: the bringup takes an exclusive ``flock`` on a file named
for its ``ROS_DOMAIN_ID`` and namespace before anything else, and holds it as long as it
runs; the kernel releases it when the process ends in any way (``kill -9`` too), so a stale
file never blocks a start. The file holds the holder's host and pid, which the refusal names.

It holds on one machine (every user: the folder is shared, as /tmp is). Across machines only
the graph check holds, with its discovery window.
"""

import errno
import fcntl
import os
import re
import socket
import tempfile
import time
from typing import Optional

#: where the lock files are (SWEETIE_MOTION_LOCK_DIR overrides; one folder for every user)
LOCK_DIR_VARIABLE = 'SWEETIE_MOTION_LOCK_DIR'
#: a holder writes who it is right after it took the lock: a reader waits this long for it [s]
HOLDER_WRITES_WITHIN = 1.0


def lock_dir() -> str:
    """Return the folder of the lock files (created, shared by every user like /tmp)."""
    folder = os.environ.get(LOCK_DIR_VARIABLE) or \
        os.path.join(tempfile.gettempdir(), 'sweetie_motion-locks')
    try:
        os.makedirs(folder, exist_ok=True)
        if os.stat(folder).st_uid == os.geteuid():
            os.chmod(folder, 0o1777)   # sticky, as /tmp: every user can lock, none can delete
    except OSError:
        pass  # opening the file says what is wrong
    return folder


def lock_path(namespace: str, domain_id: Optional[str] = None) -> str:
    """
    Return the lock file of a robot namespace in a ROS domain.

    :param namespace: the robot namespace (slashes allowed, '' for the root).
    :param domain_id: the ROS domain (default: ROS_DOMAIN_ID, which DDS takes as 0 when unset).
    """
    domain = (os.environ.get('ROS_DOMAIN_ID', '') if domain_id is None else domain_id) or '0'
    space = re.sub(r'[^A-Za-z0-9_]+', '.', namespace.strip('/')) or '.root'
    return os.path.join(lock_dir(), f'domain{domain.strip()}-{space}.lock')


def this_process() -> str:
    """Return 'host HOST, pid PID' of this process (as the motion node's ``process`` says)."""
    return f'host {socket.gethostname()}, pid {os.getpid()}'


class NamespaceLock:
    """
    The exclusive lock of one namespace in one ROS domain on this machine.

    :param namespace: the robot namespace.
    :param domain_id: the ROS domain (default: ROS_DOMAIN_ID).
    """

    def __init__(self, namespace: str, domain_id: Optional[str] = None) -> None:
        self.path = lock_path(namespace, domain_id)
        self._fd: Optional[int] = None

    def acquire(self) -> str:
        """
        Take the lock without waiting.

        :return: '' when taken; else who holds it ('host H, pid P', or 'pid unknown').
        :raises OSError: the lock file cannot be opened or created (its path in the message).
        """
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as error:
            raise OSError(error.errno, f'cannot open the lock file {self.path}: '
                          f'{error.strerror}') from None
        try:
            os.fchmod(fd, 0o666)
        except OSError:
            pass  # another user's file: it is writable already
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            return self._holder()
        os.ftruncate(fd, 0)
        os.pwrite(fd, this_process().encode(), 0)
        self._fd = fd
        return ''

    def _holder(self) -> str:
        deadline = time.monotonic() + HOLDER_WRITES_WITHIN
        while True:
            try:
                with open(self.path, encoding='utf-8', errors='replace') as stream:
                    text = stream.read().strip()
            except OSError:
                text = ''
            if text or time.monotonic() > deadline:
                return text or 'pid unknown'
            time.sleep(0.02)

    @property
    def held(self) -> bool:
        """Return whether this object holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Release the lock (the file stays: removing it would let two processes lock two)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
