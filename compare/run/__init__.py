"""Running a comparison: `python -m compare ...` (`runner`). Imports compare/report/, compare/grid/ and
compare/recipes/:

    eta             the grid's ETA from each planned run's own time
    resume_copies   an interrupted run's `last.pth` kept beside the report
    local_process   one `run.py` subprocess on this machine, and the stopper at a time budget
    ray_reaper      a local Ray instance's helper processes end with their driver
    ray_executor    the runs as Ray tasks on a cluster or a local Ray instance (`--executor ray`)
    scheduler       which planned run starts when, and what each attempt ended as
    archive         a comparison folder packed into one archive and restored (`pack`, `restore`)
    runner          the command line: plan, run, report
"""
