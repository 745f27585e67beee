"""`sweetie-motion program plot` writes the paper's four figures of a planned program."""

from sweetie_motion import cli
from sweetie_motion.paths import config_path

FIGURES = ['path_3d.png', 'tool.png', 'joints.png', 'joint_velocities.png']


def test_the_papers_program_is_planned_offline_and_drawn_in_four_figures(tmp_path, capsys):
    program = config_path('programs/paper_path.txt')
    assert cli.main(['program', 'plot', str(program), '--out', str(tmp_path)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(tmp_path / name) for name in FIGURES]
    for name in FIGURES:
        data = (tmp_path / name).read_bytes()
        assert data.startswith(b'\x89PNG') and len(data) > 20_000, name
