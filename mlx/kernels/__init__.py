"""Pure numerical kernels: functions of arrays, no I/O, no logging, no config."""
