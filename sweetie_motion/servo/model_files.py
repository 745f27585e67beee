"""
Servo models files: what ``servo identify`` saves and what the bus simulator and physics read.

A models file is YAML ``{servo_models: [{name, kp, kgear, alpha: [4], qs}, ...]}`` (the fields
of ServoModel.msg, one entry a servo, named by its joint). Where a robot has none yet, each
servo of its servo config starts from its type's defaults
(:func:`~sweetie_motion.servo.servo_model.default_params`). Pure: no rclpy.
"""

import os
from typing import List

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.parameters import ParameterError
from sweetie_motion.paths import config_path, load_yaml
from sweetie_motion.servo.servo_model import default_params, ServoModelParams
from sweetie_motion.storage.files import write_atomically


def load_servo_models(models_file: str, servos_file: str) -> List[ServoModelParams]:
    """
    Return the servo models to start from: ``models_file`` if it exists, else type defaults.

    :param models_file: a models file ('' or a missing file: none).
    :param servos_file: the servo config (its servos' joints and types).
    :raises ParameterError: a file that cannot be read or a malformed entry.
    """
    path = os.path.expanduser(models_file)
    if models_file and os.path.exists(path):
        document = load_yaml(path, ParameterError)
        entries = (document or {}).get('servo_models') if isinstance(document, dict) else None
        if not isinstance(entries, list):
            raise ParameterError(f'models_file: {path} has no servo_models list')
        try:
            return [ServoModelParams.from_fields(entry) for entry in entries]
        except (SweetieMotionError, TypeError, KeyError, ValueError) as error:
            raise ParameterError(f'models_file {path}: {error}') from None
    servos = load_yaml(config_path(servos_file), ParameterError)
    buses = ((servos or {}).get('servo_bus') or {}).get('buses') or {}
    return [default_params(servo.get('model', 'DRS-0101'), servo['joint'])
            for bus in buses.values() for servo in bus.get('servos', [])]


def save_servo_models(path: str, models: List[ServoModelParams]) -> str:
    """Write ``models`` as a models file; return the path written."""
    import yaml
    path = os.path.expanduser(path)
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    entries = [{k: (list(v) if isinstance(v, tuple) else v)
                for k, v in model.to_fields().items()} for model in models]
    write_atomically(path, '# Servo models identified by sweetie_motion servo_ident (R-SERVO-3)\n'
                     + yaml.safe_dump({'servo_models': entries}, sort_keys=False))
    return path
