"""What the gpu/torch benchmarks share: the GPU's state through NVML (nvidia-ml-py, optional) and
writing their JSON document whole or not at all.

Models: per sample the SM clock (MHz), board power (W), temperature (C) and NVML's clock-event
reasons by name, the same keys as the C++ harness's GpuTelemetry (gpu/common/GpuTelemetry.h).
Leaves out: anything needing a GPU library (no torch import here).
"""
import json
import os

try:
    import pynvml
except ImportError:  # the benchmarks run without clocks
    pynvml = None

# NVML's clock-event reason bits, in bit order (NVML API reference).
REASONS = ["gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
           "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting"]


class Telemetry:
    """NVML's view of GPU `index`; sample() is None where NVML or the device is missing."""

    def __init__(self, index=0):
        self.h = None
        if pynvml is None:
            return
        try:
            pynvml.nvmlInit()
            self.h = pynvml.nvmlDeviceGetHandleByIndex(index)
        except Exception:  # no NVML: no clocks
            self.h = None

    def sample(self):
        if self.h is None:
            return None
        try:
            bits = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(self.h)
            return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(self.h, pynvml.NVML_CLOCK_SM),
                    "power_w": pynvml.nvmlDeviceGetPowerUsage(self.h) / 1000.0,
                    "temperature_c": pynvml.nvmlDeviceGetTemperature(self.h, pynvml.NVML_TEMPERATURE_GPU),
                    "reasons": [n for i, n in enumerate(REASONS) if bits & (1 << i)]}
        except Exception:
            return None


def write_json(path, doc):
    """Writes `doc` to `path` through a temporary file renamed over it: never half a document."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)
