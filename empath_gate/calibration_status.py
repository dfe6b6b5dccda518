"""The former home of :mod:`empath_gate.calibration.status`, kept as an alias of it so that
importers written against the old path keep working; import from the new path."""

from empath_gate.calibration.status import (
    CALIBRATED,
    NOT_CALIBRATED,
    STATUS_VERSION,
    CalibrationStatus,
    calibration_for,
    read_status,
    status_from_agreement,
    status_from_gold,
    write_status,
)

__all__ = [
    "CALIBRATED",
    "NOT_CALIBRATED",
    "STATUS_VERSION",
    "CalibrationStatus",
    "calibration_for",
    "read_status",
    "status_from_agreement",
    "status_from_gold",
    "write_status",
]
