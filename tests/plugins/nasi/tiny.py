"""Small, fast NASI settings shared by the tests (NAS-Bench-201 at C = 4 on digits)."""

TINY = {"steps": 6, "batch_size": 16, "calibration_samples": 4, "supernet": {"C": 4, "N": 1}}
