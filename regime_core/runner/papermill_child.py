"""A run's child process: papermill executes the notebook, its kernel reached over IPC sockets.

    python -m regime_core.runner.papermill_child NOTEBOOK EXECUTED PARAMETERS_YML KERNEL PRIVATE

Two runs executing at once each start a kernel. Over TCP, jupyter_client picks a kernel's ports
by binding free ones and releasing them for the kernel to bind, so two processes can pick the same
port: a kernel then dies at start-up, or a client waits on another run's kernel (papermill issues
239 and 511). Here every kernel speaks over IPC: its sockets are files named after its connection
file, which lies in ``PRIVATE``, a folder of this run alone, so no two kernels can share one. The
kernel's start is bounded (:data:`regime_core.config.KERNEL_START_SECONDS`): a kernel that never
answers fails its run; so is each cell if :data:`regime_core.config.CELL_SECONDS` sets a limit.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import papermill
import yaml
from nbclient.exceptions import CellTimeoutError
from traitlets.config import Config

from regime_core import config


def execute(
    notebook: Path, executed: Path, parameters: Path, kernel_name: str, private: Path
) -> None:
    """Execute ``notebook`` in its own directory into ``executed`` with the parameters of the
    YAML file ``parameters``, its kernel connected over IPC in ``private``."""
    connection_file = str(private / "kernel.json")
    kernel = Config({"KernelManager": {"transport": "ipc", "connection_file": connection_file}})
    papermill.execute_notebook(
        str(notebook),
        str(executed),
        parameters=yaml.safe_load(parameters.read_text(encoding="utf-8")),
        kernel_name=kernel_name,
        cwd=notebook.parent,
        progress_bar=False,
        start_timeout=config.KERNEL_START_SECONDS,
        execution_timeout=config.CELL_SECONDS,
        config=kernel,  # papermill hands it to nbclient, which builds the kernel manager with it
    )


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    notebook, executed, parameters, kernel_name, private = sys.argv[1:]
    try:
        execute(Path(notebook), Path(executed), Path(parameters), kernel_name, Path(private))
    except CellTimeoutError as timeout:  # one line, where the runner reads why a run failed
        sys.exit(f"{str(timeout).splitlines()[0]} (regime_core.config.CELL_SECONDS)")
