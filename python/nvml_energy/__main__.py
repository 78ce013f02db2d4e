"""GPU energy windows for pbh through nvidia-ml-py (the pynvml module).

Started once by packages/core/src/energy/nvml.ts. It prints one JSON line on start: {"kind": "hello", "devices": [...]}
or {"kind": "unavailable", "reason": ...} (and exits). Then, one line in and one JSON line out:
  begin -> {"kind": "begun"}: a thread reads every GPU's total energy counter and power every INTERVAL seconds
  end   -> {"kind": "window", "devices": [...]}: the window's energy from the counter, the counter's updates seen and
           their period, and the power samples integrated over time (the trapezoid rule)
  quit (or end of input) -> exits.
The counter (nvmlDeviceGetTotalEnergyConsumption, mJ since the driver loaded, Volta and newer) updates every 20-100 ms,
so sampling faster than that sees each update; an older GPU answers NOT_SUPPORTED and only power is there.
"""
import json
import sys
import threading
import time


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def reading(call):
    """(value, None) or (None, the error's words)."""
    try:
        return call(), None
    except Exception as error:  # NVMLError subclasses, and anything a driver raises
        return None, f"{type(error).__name__}: {error}"


class Device:
    def __init__(self, nvml, index):
        self.nvml = nvml
        self.index = index
        self.handle = nvml.nvmlDeviceGetHandleByIndex(index)
        name, _ = reading(lambda: nvml.nvmlDeviceGetName(self.handle))
        self.name = name.decode() if isinstance(name, bytes) else (name or f"GPU {index}")
        _, self.energy_error = reading(self.energy_mj)
        _, self.power_error = reading(self.power_mw)

    def energy_mj(self):
        return int(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))

    def power_mw(self):
        return int(self.nvml.nvmlDeviceGetPowerUsage(self.handle))

    def describe(self):
        return {"index": self.index, "name": self.name, "energy_error": self.energy_error, "power_error": self.power_error}


def updates(times, values):
    """How many times a reading changed, and the mean interval between the changes seen (None below two)."""
    changed = [times[i] for i in range(1, len(values)) if values[i] != values[i - 1]]
    period = (changed[-1] - changed[0]) / (len(changed) - 1) if len(changed) >= 2 else None
    return len(changed), period


class Window:
    def __init__(self, devices, interval):
        self.devices = devices
        self.interval = interval
        self.samples = {d.index: ([], [], []) for d in devices}
        self.errors = {d.index: None for d in devices}
        self.stop = threading.Event()
        self.t0 = time.perf_counter()
        self.sample()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def sample(self):
        for d in self.devices:
            t, energy, power = self.samples[d.index]
            now = time.perf_counter() - self.t0
            e, e_error = reading(d.energy_mj) if d.energy_error is None else (None, None)
            p, p_error = reading(d.power_mw) if d.power_error is None else (None, None)
            if e_error or p_error:
                self.errors[d.index] = self.errors[d.index] or e_error or p_error
                continue
            t.append(now)
            energy.append(e)
            power.append(p)

    def run(self):
        while not self.stop.wait(self.interval):
            self.sample()

    def finish(self):
        self.stop.set()
        self.thread.join()
        self.sample()
        seconds = time.perf_counter() - self.t0
        out = []
        for d in self.devices:
            t, energy, power = self.samples[d.index]
            # The span the samples cover: what the counter's difference and the power integral are over.
            span = t[-1] - t[0] if len(t) >= 2 else seconds
            entry = {"index": d.index, "seconds": span, "error": self.errors[d.index], "samples": len(t)}
            if d.energy_error is None and len(t) >= 2:
                ticks, period = updates(t, energy)
                entry.update(energy_joules=(energy[-1] - energy[0]) / 1000.0, energy_ticks=ticks, energy_period_s=period)
            if d.power_error is None and len(t) >= 2:
                ticks, period = updates(t, power)
                joules = sum((t[i] - t[i - 1]) * (power[i] + power[i - 1]) / 2000.0 for i in range(1, len(t)))
                entry.update(power_joules=joules, power_ticks=ticks, power_period_s=period)
            out.append(entry)
        return out


def main():
    interval = float(sys.argv[1]) if len(sys.argv) > 1 else 0.01
    try:
        import pynvml as nvml
    except ImportError as error:
        say({"kind": "unavailable", "reason": f"nvidia-ml-py is not installed in {sys.executable} ({error}): run npx pbh doctor --fix"})
        return
    try:
        nvml.nvmlInit()
    except Exception as error:
        say({"kind": "unavailable", "reason": f"nvmlInit failed ({type(error).__name__}: {error}): no NVIDIA driver or GPU here"})
        return
    try:
        count = nvml.nvmlDeviceGetCount()
        if count == 0:
            say({"kind": "unavailable", "reason": "NVML is loaded but sees no GPU"})
            return
        devices = [Device(nvml, i) for i in range(count)]
        say({"kind": "hello", "interval_s": interval, "devices": [d.describe() for d in devices]})
        window = None
        for line in sys.stdin:
            command = line.strip()
            if command == "begin":
                window = Window(devices, interval)
                say({"kind": "begun"})
            elif command == "end" and window is not None:
                say({"kind": "window", "devices": window.finish()})
                window = None
            elif command == "quit":
                break
            else:
                say({"kind": "error", "reason": f"unknown command {command!r} (begin, end, quit)"})
    finally:
        nvml.nvmlShutdown()


if __name__ == "__main__":
    main()
