"""GPU energy for pbh through NVML (nvidia-ml-py): see __main__.py."""
