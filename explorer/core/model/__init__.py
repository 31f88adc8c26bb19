"""What is analysed: model descriptions (presets, config.json, custom stacks, blocks), the ops
a step is made of, how a step is spread over devices and trained, the workload's parameters,
and the session that names devices, workload and what-ifs."""
