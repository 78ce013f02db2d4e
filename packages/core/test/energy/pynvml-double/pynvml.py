"""A test double of nvidia-ml-py's pynvml module: the calls python/nvml_energy makes, with their signatures and errors.

FAKE_NVML (JSON) describes the GPUs: {"init_error": null | "LibraryNotFound", "devices": [{"name", "watts",
"energy_period_s" (null: the counter is not supported, as before Volta)}]}. The energy counter is mJ since "driver
load" and advances only every energy_period_s, as NVML's does; power is the constant watts, in mW.
"""
import json
import os
import time

NVML_SUCCESS = 0
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_LIBRARY_NOT_FOUND = 12

_config = json.loads(os.environ.get("FAKE_NVML", '{"devices": []}'))
_t0 = time.perf_counter()
_initialised = False


class NVMLError(Exception):
    _messages = {NVML_ERROR_NOT_SUPPORTED: "Not Supported", NVML_ERROR_LIBRARY_NOT_FOUND: "NVML Shared Library Not Found"}

    def __init__(self, value):
        self.value = value

    def __str__(self):
        return self._messages.get(self.value, f"Unknown Error {self.value}")


class NVMLError_NotSupported(NVMLError):
    def __init__(self):
        super().__init__(NVML_ERROR_NOT_SUPPORTED)


class NVMLError_LibraryNotFound(NVMLError):
    def __init__(self):
        super().__init__(NVML_ERROR_LIBRARY_NOT_FOUND)


def nvmlInit():
    global _initialised
    if _config.get("init_error") == "LibraryNotFound":
        raise NVMLError_LibraryNotFound()
    _initialised = True


def nvmlShutdown():
    global _initialised
    _initialised = False


def _check():
    if not _initialised:
        raise NVMLError(1)


def nvmlDeviceGetCount():
    _check()
    return len(_config["devices"])


def nvmlDeviceGetHandleByIndex(index):
    _check()
    return {"index": index, **_config["devices"][index]}


def nvmlDeviceGetName(handle):
    return handle["name"]


def nvmlDeviceGetTotalEnergyConsumption(handle):
    period = handle.get("energy_period_s")
    if period is None:
        raise NVMLError_NotSupported()
    updates = int((time.perf_counter() - _t0) / period)
    return 5_000_000 + int(updates * period * handle["watts"] * 1000)


def nvmlDeviceGetPowerUsage(handle):
    return int(handle["watts"] * 1000)
