"""A motion process stepped by hand on the virtual robot (simulated time, no ROS)."""

from sweetie_motion.controllers.joint_state import FollowJointStateCore
from sweetie_motion.core.component import CycleResources
from sweetie_motion.core.cycle import StageRole
from sweetie_motion.core.smoothing import create_filter, filter_spec
from sweetie_motion.servo.bus import BusInput, BusOutput
from sweetie_motion.servo.virtual import VirtualServoBus

PERIOD = 0.01


class Sim:
    """A motion process stepped by hand on the virtual robot."""

    def __init__(self, model):
        self.process = CycleResources(model, PERIOD)
        self.view = self.process.view
        joints = self.process.servo_joints()
        limits = self.view.velocity_limits()[self.view.get_joint_indices(joints)]
        self.bus = VirtualServoBus(joints, limits, lag=0.03, delay=0)
        indices = self.view.get_joint_indices(joints)
        cycle = self.process.cycle
        virtual = self.view.get_joint_indices(self.view.list_virtual_joints())
        cycle.add_stage(StageRole.INPUT, BusInput(self.bus, indices, virtual))
        cycle.add_stage(StageRole.AGGREGATOR, self.process.aggregator)
        # the safety stage as the cycle process installs it: every reference passes it
        self.process.safety.reset(cycle.reference.position)
        cycle.add_stage(StageRole.SAFETY, self.process.safety)
        cycle.add_stage(StageRole.OUTPUT, BusOutput(self.bus, indices))
        self.process.bus = self.bus
        self.now = 0.0
        self.bus.receive(self.now)
        self.refs = []
        self.velocities = []
        #: controller name -> the GoalPlanner of its node
        self.planners = {}

    def idx(self, joint):
        return self.view.get_joint_index(joint)

    def fjs(self, name='fjs', chains=('leg1', 'head', 'nose'), delay=0.2, stay=True,
            smoothing='critically_damped', order=10):
        if smoothing == 'jerk_limited':  # as the node configures it: the model's limits
            view = self.view
            spec = filter_spec(smoothing, {}, {}, view.list_all_joints(),
                               view.velocity_limits(), (), view.acceleration_limits(),
                               view.jerk_limits())
            make = lambda joints: spec.create(joints, PERIOD)  # noqa: E731
        else:
            make = lambda joints: create_filter(  # noqa: E731
                smoothing, joints, PERIOD, {'transient_time': 0.2})
        core = FollowJointStateCore(name, self.view, self.process.arbiter, list(chains), delay,
                                    stay, make)
        self.process.cycle.add_stage(StageRole.CONTROLLER, core, order)
        core.start(self.process.cycle.reference)
        core.acquire()
        return core

    def step(self, n=1):
        for _ in range(n):
            self.now += PERIOD
            tick = self.process.cycle.step(self.now)
            self.refs.append(tick.reference.position.copy())
            self.velocities.append(tick.reference.velocity.copy())
        return tick

    def trajectory_controller(self, name='trajectory', chains=('leg1', 'leg2', 'leg3', 'leg4',
                                                               'head', 'nose', 'eyes'),
                              smoothing='transient', defaults=None, order=20):
        """Add a JointTrajectoryCore to the cycle and return it (its planner: ``planner``)."""
        from sweetie_motion.controllers.joint_trajectory import JointTrajectoryCore
        core = JointTrajectoryCore(
            name, self.view, self.process.arbiter, list(chains),
            lambda joints: create_filter(smoothing, joints, PERIOD,
                                         {'transient_time': 0.25}))
        self.add_planner(core, defaults)
        self.process.cycle.add_stage(StageRole.CONTROLLER, core, order)
        core.operational = True
        self.step(1)
        return core

    def add_planner(self, core, defaults=None):
        """Give ``core`` the GoalPlanner its node would build (no motion checks)."""
        from sweetie_motion.controllers.goals import GoalPlanner
        from sweetie_motion.trajectory.tolerances import ToleranceDefaults
        self.planners[core.name] = GoalPlanner(core.name, self.view, core.chains,
                                               defaults or ToleranceDefaults())

    def planner(self, core):
        """Return the GoalPlanner of ``core`` (what its node plans its goals with)."""
        return self.planners[core.name]

    def prepare(self, core, goal):
        """Plan ``goal`` for ``core`` from the cycle's poses, as its node does."""
        from sweetie_motion.controllers.goals import ExecutingGoal
        cycle = self.process.cycle
        return ExecutingGoal(self.planner(core).plan(
            goal, lambda: (cycle.reference, cycle.measured)))

    def run_goal(self, core, goal, limit=20.0):
        """Prepare, start and step until the goal has an outcome; return it."""
        executing = self.prepare(core, goal)
        core.start(executing)
        steps = 0
        while executing.outcome is None and steps < limit / PERIOD:
            self.step(1)
            steps += 1
        return executing
