"""Robot descriptions: a YAML file naming a URDF plus its chains and resource groups."""

from pathlib import Path
from typing import Any, Mapping, Union

from sweetie_motion.errors import ModelError
from sweetie_motion.model.check_settings import CheckSettings
from sweetie_motion.model.mirror import MirrorSettings
from sweetie_motion.model.physics_settings import PhysicsSettings
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.paths import config_path, load_yaml


def robot_model_from_mapping(robot: Mapping[str, Any], base_dir: Union[str, Path]
                             ) -> RobotModel:
    """
    Create (not configure) a RobotModel from a ``robot:`` mapping.

    :param robot: ``{urdf: path, chains, groups, limits, checks, physics, mirror}``;
        a relative urdf (srdf, servo config) path is relative to ``base_dir``; ``urdf_xml``
        may give the URDF text instead; ``limits`` gives acceleration and jerk limits (see
        :class:`RobotModel`); ``checks`` the motion checks (:class:`CheckSettings`);
        ``physics`` the robot on a floor (:class:`PhysicsSettings`); ``mirror`` what is
        symmetric left and right (:class:`~sweetie_motion.model.mirror.MirrorSettings`).
    :raises ModelError: the mapping lacks the URDF or has no chains.
    """
    if not isinstance(robot, Mapping):
        raise ModelError('robot description must be a mapping with urdf, chains, groups')
    chains = robot.get('chains') or {}
    groups = robot.get('groups') or {}
    limits = robot.get('limits') or {}
    if not isinstance(limits, Mapping):
        raise ModelError('robot description: "limits" must be a mapping '
                         '{default | group | chain | joint: {acceleration, jerk}}')
    if not chains and not groups:
        raise ModelError('robot description declares no chains and no groups')
    checks = CheckSettings.from_mapping(robot.get('checks'), base_dir)
    physics = PhysicsSettings.from_mapping(robot.get('physics'), base_dir)
    mirror = MirrorSettings.from_mapping(robot.get('mirror'))
    if robot.get('urdf_xml'):
        model = RobotModel(urdf=robot['urdf_xml'], chains=chains, groups=groups, limits=limits)
    else:
        if not robot.get('urdf'):
            raise ModelError('robot description lacks "urdf" (a file path) or "urdf_xml"')
        urdf = Path(robot['urdf'])
        if not urdf.is_absolute():
            urdf = Path(base_dir) / urdf
        model = RobotModel(urdf_file=str(urdf), chains=chains, groups=groups, limits=limits)
    model.check_settings = checks
    model.physics_settings = physics
    model.mirror_settings = mirror
    return model


def load_robot_description(path: Union[str, Path], urdf_xml: str = '') -> RobotModel:
    """
    Create (not configure) a RobotModel from a robot description YAML file.

    :param path: the YAML file; a relative path is looked up in the current directory, then
        in the package's config/.
    :param urdf_xml: the URDF document to use instead of the file the YAML names (from the
        ``robot_description`` parameter or topic, as robot_state_publisher has it); chains,
        groups and limits still come from the YAML.
    :raises ModelError: the file is missing or malformed.
    """
    path = config_path(str(path))
    document = load_yaml(path, ModelError)
    if not isinstance(document, Mapping) or 'robot' not in document:
        raise ModelError(f'{path}: expected a top-level "robot:" mapping')
    robot = document['robot']
    if urdf_xml and isinstance(robot, Mapping):
        robot = {**robot, 'urdf_xml': urdf_xml}
    return robot_model_from_mapping(robot, path.parent)
