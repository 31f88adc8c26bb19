"""The dockable panels around the chart: hardware, workload, kernel lab, details."""
