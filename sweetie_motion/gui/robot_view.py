"""
The robot in 3D, drawn with QPainter: the editor's and the console's robot view.

Layout only: it shows what it is given and reports what a person picks through an attribute.
"""

import math
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np
from PyQt5.QtCore import QPointF, Qt
from PyQt5.QtGui import QColor, QPainter, QPen, QPolygonF
from PyQt5.QtWidgets import QWidget
from sweetie_motion.checks.marks import PoseMarks
from sweetie_motion.model.robot_model import RobotModel

#: a pose that changed by less than this is not redrawn [rad or m]
REDRAW_TOLERANCE = 1e-4


class RobotView3D(QWidget):
    """
    The robot in its current pose, drawn from the RobotModel, with the program's planned path.

    The link tree of the URDF (the links' origins, chains in colour, virtual joints dotted),
    the planned tool path (red) and its waypoints (numbered), the tool (a red cross), the
    chain's forbidden zones (boxes and balls, light red) and a floor grid, in an orthographic
    projection a person turns with the mouse (drag: turn, wheel: zoom, double-click: the
    first view, shift+click: a point for :attr:`picked`). Drawn with QPainter: a frame takes
    about a millisecond, where a matplotlib 3D figure (``plots.draw_kinematic_tree``) takes
    35-90 ms, and holds Python's lock meanwhile, which the slider stream of the same process
    felt as stalls.

    :meth:`set_pose` and :meth:`set_path` only take the data; :meth:`redraw` (the window's
    timer) repaints when something changed, so the view animates at the timer's rate however
    fast joint_states come. The scale stays while the robot moves (the view does not jump).

    :param model: the configured RobotModel; :param chain: the chain whose zones are drawn.
    """

    COLORS = ('#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
              '#bcbd22', '#17becf')
    VIEW = (-60.0, 25.0)  # azimuth and elevation of the first view [deg]

    def __init__(self, model: RobotModel, chain: Optional[str] = None) -> None:
        super().__init__()
        self.setMinimumSize(200, 200)
        self.model = model
        tree = model.urdf_tree()
        colors = {c: self.COLORS[k % len(self.COLORS)] for k, c in enumerate(model.list_chains())}
        info = {name: model.get_joint_info(name) for name in model.list_all_joints()}
        #: (parent link, child link, colour, width, dotted) of each URDF joint
        self.segments = []
        for joint in tree.joints.values():
            joint_info = info.get(joint.name)
            color = colors.get(joint_info.chain, '#808080') if joint_info else '#b0b0b0'
            self.segments.append((joint.parent, joint.child, color, 4 if joint_info else 1,
                                  bool(joint_info and joint_info.virtual)))
        self.zones = []
        if chain is not None:
            from sweetie_motion.cartesian.limiter import WorkspaceLimiter
            self.zones = list(WorkspaceLimiter.from_config(
                model.get_chain_property(chain, 'workspace')).zones)
        self.pose: Dict[str, float] = {}
        #: a pose drawn faintly beside the robot's (a solved target before it is moved to)
        self.ghost: Optional[Dict[str, float]] = None
        self._ghost_links: Dict[str, np.ndarray] = {}
        self.path: Optional[np.ndarray] = None
        self.waypoints: Optional[np.ndarray] = None
        self.tool: Optional[np.ndarray] = None
        self.title = ''
        #: the hooves marked (contact link -> supports the robot; False: lifted), None: none
        self.hooves: Optional[Dict[str, bool]] = None
        #: the motion checks at the shown moment (links too close, centre of mass, support)
        self.marks: Optional[PoseMarks] = None
        #: frames painted, and the number of path points the last one drew
        self.frames = 0
        self.painted_path = 0
        self.azimuth, self.elevation = self.VIEW
        self.zoom = 1.0
        self._drawn: Optional[Tuple[Dict[str, float], int]] = None
        self._path_revision = 0
        self._box: Optional[Tuple[np.ndarray, float]] = None
        self._drag = None
        #: called with the widget coordinates [px] a person shift+clicked (to :meth:`unproject`)
        self.picked: Optional[Callable[[np.ndarray], None]] = None
        self._reach = np.array(list(model.link_positions({}).values()))
        self._links = model.link_positions({})
        #: where the robot's base is in the world (rotation 3x3, position [m]): the physics
        #: has it on a floor at z = 0; None: the base at the origin (the kinematic robot)
        self.base: Optional[Tuple[np.ndarray, np.ndarray]] = None

    def set_pose(self, pose: Mapping[str, float], tool: Optional[np.ndarray] = None,
                 title: str = '') -> None:
        """Take the pose to draw [rad or m] and the tool's position [m] (drawn at redraw)."""
        self.pose = dict(pose)
        self.tool = None if tool is None else np.asarray(tool, dtype=float)
        self.title = title

    def painted_texts(self) -> List[Tuple[str, str]]:
        """
        Return the view's title and hint lines as (full, painted) pairs.

        A line wider than the view is painted elided ("...") and the full lines are the
        view's tooltip (at 1366 x 768 the hint was cut at the view's edge).
        """
        hint = 'grid 0.25 m; drag: turn, wheel: zoom'
        if self.picked is not None:
            hint += ', shift+click: target'
        metrics = self.fontMetrics()
        room = max(self.width() - 16, 0)
        pairs = [(text, metrics.elidedText(text, Qt.ElideRight, room))
                 for text in (self.title, hint)]
        tip = '\n'.join(text for text, _ in pairs if text)
        if self.toolTip() != tip:
            self.setToolTip(tip)
        return pairs

    def link_position(self, link: str) -> np.ndarray:
        """Return where a link was drawn at the last redraw [m] (the base's pose applied)."""
        return np.array(self._links[link])

    def set_base(self, base: Optional[Tuple[np.ndarray, np.ndarray]]) -> None:
        """
        Take where the base is (rotation 3x3, position [m]; None: at the origin), drawn at redraw.

        A robot on the physics engine's floor is drawn where the simulation has it: tilted,
        fallen, its hooves on the floor grid (z = 0). The checks' marks, computed for the body
        standing, are not drawn meanwhile.
        """
        if base is None and self.base is None:
            return
        self.base = None if base is None else (np.asarray(base[0], dtype=float),
                                               np.asarray(base[1], dtype=float))
        self._path_revision += 1   # repaint at the next redraw

    def set_hooves(self, hooves: Optional[Mapping[str, bool]]) -> None:
        """
        Mark the hooves (contact link -> supports the robot; None: no marks), at redraw.

        A filled green disc where a hoof supports the robot, an orange ring where it is lifted.
        """
        hooves = dict(hooves) if hooves else None
        if hooves != self.hooves:
            self.hooves = hooves
            self._path_revision += 1   # repaint at the next redraw

    def set_ghost(self, pose: Optional[Mapping[str, float]]) -> None:
        """Take a pose to draw faintly beside the robot's (None: none) [rad or m]."""
        self.ghost = None if pose is None else dict(pose)
        self._ghost_links = {} if pose is None else self.model.link_positions(self.ghost)
        self._path_revision += 1   # repaint at the next redraw

    def set_marks(self, marks: Optional[PoseMarks]) -> None:
        """
        Take the checks' marks of the shown moment (None: none), drawn at the next redraw.

        Links closer than the collision margin are drawn red and thick; the centre of mass is
        a dot (green: the balance keeps its margin, red: not) with a line down to the ground,
        over the support polygon of the supporting feet (filled light green or red).
        """
        if marks is self.marks:
            return
        self.marks = marks
        self._path_revision += 1   # repaint at the next redraw

    def set_path(self, path: Optional[np.ndarray], waypoints: Optional[np.ndarray]) -> None:
        """Take the planned tool path [m] (n, 3) and its waypoints [m] (k, 3); None: none."""
        self.path = None if path is None or not len(path) else np.asarray(path, dtype=float)
        self.waypoints = (None if waypoints is None or not len(waypoints)
                          else np.asarray(waypoints, dtype=float))
        self._path_revision += 1
        self._box = None

    def _changed(self) -> bool:
        if self._drawn is None:
            return True
        pose, revision = self._drawn
        if revision != self._path_revision or pose.keys() != self.pose.keys():
            return True
        return any(abs(pose[j] - v) > REDRAW_TOLERANCE for j, v in self.pose.items())

    def redraw(self) -> bool:
        """Repaint if the pose or the path changed; return whether it did."""
        if not self._changed():
            return False
        links = self.model.link_positions(self.pose)
        if self.base is not None:
            rotation, position = self.base
            links = {name: rotation @ point + position for name, point in links.items()}
        self._links = links
        self._drawn = (dict(self.pose), self._path_revision)
        self.update()
        return True

    # --- projection ----------------------------------------------------------------------------

    def _fit(self) -> Tuple[np.ndarray, float]:
        links = np.array(list(self._links.values()))
        box = self._box
        if box is not None and np.all(np.abs(links - box[0]) <= box[1]):
            return box
        points = np.vstack([self._reach, links] + ([self.path] if self.path is not None
                                                   else []))
        centre = (points.max(axis=0) + points.min(axis=0)) / 2
        radius = max(float(np.linalg.norm(points - centre, axis=1).max()), 0.05) * 1.05
        self._box = (centre, radius)
        return self._box

    def _axes(self) -> Tuple[np.ndarray, np.ndarray, float]:
        # the screen's right and up directions in the world, and pixels per metre
        _, radius = self._fit()
        az, el = math.radians(self.azimuth), math.radians(self.elevation)
        right = np.array([-math.sin(az), math.cos(az), 0.0])
        up = np.array([-math.sin(el) * math.cos(az), -math.sin(el) * math.sin(az),
                       math.cos(el)])
        return right, up, self.zoom * min(self.width(), self.height()) / (2.0 * radius)

    def project(self, points: np.ndarray) -> np.ndarray:
        """Return the widget coordinates [px] of points [m], shape (n, 3) -> (n, 2)."""
        centre, _ = self._fit()
        right, up, scale = self._axes()
        relative = np.atleast_2d(points) - centre
        x = self.width() / 2 + (relative @ right) * scale
        y = self.height() / 2 + 10 - (relative @ up) * scale
        return np.stack([x, y], axis=1)

    def unproject(self, x: float, y: float, through: np.ndarray) -> np.ndarray:
        """
        Return the point [m] under widget coordinates (x, y) [px] at the depth of ``through``.

        A projection loses depth: the point is taken on the plane through ``through`` [m]
        that faces the viewer (as RViz's markers move in their view plane), so a click moves
        a target sideways and up or down as seen, and turning the view picks the other axes.
        """
        centre, _ = self._fit()
        right, up, scale = self._axes()
        depth = np.cross(right, up)
        relative = np.asarray(through, dtype=float) - centre
        return (centre + depth * float(relative @ depth)
                + right * (x - self.width() / 2) / scale
                + up * (self.height() / 2 + 10 - y) / scale)

    def _polyline(self, painter: QPainter, points: np.ndarray) -> None:
        painter.drawPolyline(QPolygonF([QPointF(x, y) for x, y in self.project(points)]))

    # --- painting ------------------------------------------------------------------------------

    def paintEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Paint the floor grid, the zones, the path, the robot and the tool."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing)
        painter.fillRect(self.rect(), QColor('white'))
        centre, radius = self._fit()
        self._paint_floor(painter, centre, radius)
        self._paint_zones(painter)
        if self.path is not None:
            painter.setPen(QPen(QColor('#d62728'), 1.5))
            self._polyline(painter, self.path)
        if self.waypoints is not None:
            painter.setPen(QPen(QColor('black'), 1))
            painter.setBrush(QColor('black'))
            for k, (x, y) in enumerate(self.project(self.waypoints), start=1):
                painter.drawEllipse(QPointF(x, y), 2.5, 2.5)
                painter.drawText(QPointF(x + 4, y - 4), str(k))
        self._paint_links(painter)
        self._paint_balance(painter)
        for link, supports in (self.hooves or {}).items():
            if link not in self._links:
                continue
            x, y = self.project(np.array([self._links[link]]))[0]
            color = QColor('#2e7d32' if supports else '#e65100')
            painter.setPen(QPen(color, 2))
            painter.setBrush(color if supports else Qt.NoBrush)
            painter.drawEllipse(QPointF(x, y), 5, 5)
        painter.setBrush(Qt.NoBrush)
        if self.tool is not None:
            x, y = self.project(self.tool)[0]
            painter.setPen(QPen(QColor('#d62728'), 2))
            painter.drawLine(QPointF(x - 6, y - 6), QPointF(x + 6, y + 6))
            painter.drawLine(QPointF(x - 6, y + 6), QPointF(x + 6, y - 6))
        painter.setPen(QColor('#404040'))
        title, hint = self.painted_texts()
        painter.drawText(8, 16, title[1])
        painter.drawText(8, self.height() - 8, hint[1])
        painter.end()
        self.frames += 1
        self.painted_path = 0 if self.path is None else len(self.path)

    def _paint_floor(self, painter: QPainter, centre: np.ndarray, radius: float) -> None:
        """Paint the floor (z = 0) around the robot, a line every 0.25 m, and the base axes."""
        painter.setPen(QPen(QColor('#e4e4e4'), 1))
        step = 0.25
        low = np.floor((centre[:2] - radius) / step) * step
        high = np.ceil((centre[:2] + radius) / step) * step
        for x in np.arange(low[0], high[0] + step / 2, step):
            self._polyline(painter, np.array([[x, low[1], 0.0], [x, high[1], 0.0]]))
        for y in np.arange(low[1], high[1] + step / 2, step):
            self._polyline(painter, np.array([[low[0], y, 0.0], [high[0], y, 0.0]]))
        for axis, color in enumerate(('#d62728', '#2ca02c', '#1f77b4')):
            painter.setPen(QPen(QColor(color), 2))
            tip = np.zeros(3)
            tip[axis] = 0.2
            self._polyline(painter, np.array([np.zeros(3), tip]))

    def _paint_links(self, painter: QPainter) -> None:
        """Paint the ghost (dashed), then the links; a link that touches another in red."""
        for parent, child, _, width, _ in self.segments:
            ghost = self._ghost_links
            if parent in ghost and child in ghost:
                pen = QPen(QColor('#9467bd'), width, Qt.DashLine)
                painter.setPen(pen)
                self._polyline(painter, np.array([ghost[parent], ghost[child]]))
        links = self._links
        touching = self.marks.touching if self.marks is not None and self.base is None \
            else frozenset()
        for parent, child, color, width, dotted in self.segments:
            if parent not in links or child not in links:
                continue
            if child in touching or parent in touching:
                color, width = '#e00000', width + 3
            pen = QPen(QColor(color), width)
            pen.setCapStyle(Qt.RoundCap)
            if dotted:
                pen.setStyle(Qt.DotLine)
            painter.setPen(pen)
            self._polyline(painter, np.array([links[parent], links[child]]))

    def _paint_balance(self, painter: QPainter) -> None:
        marks = self.marks
        if marks is None or marks.com is None or self.base is not None:
            return
        color = QColor('#2ca02c' if marks.balanced else '#e00000')
        if marks.support is not None and len(marks.support):
            fill = QColor(color)
            fill.setAlpha(50)
            painter.setPen(QPen(color, 1.5))
            painter.setBrush(fill)
            corners = self.project(marks.support)
            if len(corners) >= 3:
                painter.drawPolygon(QPolygonF([QPointF(x, y) for x, y in corners]))
            else:
                painter.drawPolyline(QPolygonF([QPointF(x, y) for x, y in corners]))
        if marks.com_on_ground is not None:
            painter.setPen(QPen(color, 1, Qt.DashLine))
            self._polyline(painter, np.array([marks.com, marks.com_on_ground]))
            (gx, gy), = self.project(marks.com_on_ground)
            painter.setPen(QPen(color, 2))
            painter.drawLine(QPointF(gx - 5, gy), QPointF(gx + 5, gy))
            painter.drawLine(QPointF(gx, gy - 5), QPointF(gx, gy + 5))
        (x, y), = self.project(marks.com)
        painter.setPen(QPen(QColor('black'), 1))
        painter.setBrush(color)
        painter.drawEllipse(QPointF(x, y), 5.0, 5.0)
        painter.setBrush(Qt.NoBrush)
        painter.setPen(QColor('#404040'))
        painter.drawText(8, 32, marks.describe())

    def _paint_zones(self, painter: QPainter) -> None:
        painter.setPen(QPen(QColor('#f0a0a0'), 1, Qt.DashLine))
        painter.setBrush(Qt.NoBrush)
        for zone in self.zones:
            if zone.kind == 'box':
                corners = np.array([[zone.minimum[0] if i & 1 == 0 else zone.maximum[0],
                                     zone.minimum[1] if i & 2 == 0 else zone.maximum[1],
                                     zone.minimum[2] if i & 4 == 0 else zone.maximum[2]]
                                    for i in range(8)])
                for i in range(8):
                    for bit in (1, 2, 4):
                        if not i & bit:
                            self._polyline(painter, corners[[i, i | bit]])
            elif zone.kind == 'sphere':
                (x, y), = self.project(zone.center)
                edge = self.project(zone.center + np.array([0.0, 0.0, zone.radius]))[0]
                r = float(np.hypot(*(edge - (x, y))))
                painter.drawEllipse(QPointF(x, y), r, r)

    # --- the mouse -----------------------------------------------------------------------------

    def mousePressEvent(self, event) -> None:  # noqa: N802 -- Qt API
        if event.modifiers() & Qt.ShiftModifier and self.picked is not None:
            self._drag = None
            self.picked(np.array([float(event.x()), float(event.y())]))
            return
        self._drag = (event.pos(), self.azimuth, self.elevation)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 -- Qt API
        if self._drag is None:
            return
        start, azimuth, elevation = self._drag
        delta = event.pos() - start
        self.azimuth = azimuth - delta.x() * 0.5
        self.elevation = float(np.clip(elevation + delta.y() * 0.5, -89.0, 89.0))
        self.update()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 -- Qt API
        self._drag = None

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802 -- Qt API
        self.azimuth, self.elevation = self.VIEW
        self.zoom = 1.0
        self.update()

    def wheelEvent(self, event) -> None:  # noqa: N802 -- Qt API
        self.zoom = float(np.clip(self.zoom * 1.0015 ** event.angleDelta().y(), 0.2, 10.0))
        self.update()
