"""
The GUI kit the trajectory editor and the operator console share (PyQt5 and Qt-free parts).

The 3D robot view, the sliders and widgets, the message vocabulary and board, the app's
skeleton, the stop-first guard, the unsaved-work backups and questions, the bridges' base and
the presenters' event dispatch. ``editor/`` and ``console/`` import this kit, never each other;
the kit imports neither.
"""
