"""Every pytest run in the repository: test kernels use ipc (tests/ipc_kernels.py)."""

pytest_plugins = ("tests.ipc_kernels",)
