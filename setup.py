"""ament_python build of sweetie_motion (colcon, or `make setup` in editable mode)."""

from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'sweetie_motion'


def tree(folder):
    """List (install dir, files) pairs of a folder, keeping its sub-folders."""
    pairs = []
    for path, _, files in os.walk(folder):
        if files:
            pairs.append((os.path.join('share', package_name, path),
                          [os.path.join(path, f) for f in files]))
    return pairs


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(include=[package_name, package_name + '.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
    ] + tree('config'),
    # the dependencies are ROS packages and system libraries: package.xml declares them for
    # rosdep (with rosdep/sweetie_motion.yaml for the pip ones), requirements/requirements.in
    # for `make setup`; pip must not try to install ROS from here
    install_requires=['setuptools'],
    zip_safe=False,
    maintainer='sweetie_motion developers',
    maintainer_email='sweetie-motion@example.org',
    description='Motion subsystem for performing robots: a realtime-ish control cycle with a '
                'limb arbiter and a safety stage, trajectory and joint-state controllers, '
                'stored motions played by name, a trajectory editor, a HerkuleX servo driver, '
                'Cartesian motion with inverse kinematics and motion programs.',
    license='BSD-3-Clause',
    extras_require={'test': ['pytest']},
    entry_points={
        'console_scripts': [
            'sweetie-motion = sweetie_motion.cli:main',
            'trajectory_editor = sweetie_motion.editor.app:main',
        ],
    },
)
