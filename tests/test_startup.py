"""The command line's start stays lean (issue 38): building every command's parser imports no
pandas, matplotlib, pyarrow, scipy or scikit-learn; a command loads them where it uses them."""

import subprocess
import sys

HEAVY = ("pandas", "matplotlib", "pyarrow", "scipy", "sklearn")


def test_the_command_line_imports_no_heavy_library_until_a_command_needs_one():
    code = (
        "import sys\n"
        "from hetlab import cli\n"
        "try:\n"
        "    cli.main(['simulate', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]", out.splitlines()[-1]
