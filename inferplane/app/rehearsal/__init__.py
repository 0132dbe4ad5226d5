"""`inferplane rehearse`: the blueprint's control loops run for real against labelled
stand-in replicas under a traffic profile, and are judged against the SLO.

- `traffic`: traffic profiles (a YAML file, three bundled ones) and what they send per zone;
- `engine`: the stand-in replica's latency model, from the capacity planner's model of the
  model on its GPU, and the histograms it exports with vLLM's bucket boundaries;
- `timeline`: the samples every 5 s, and the queries (the dashboards' own) that read them;
- `verdict`: per model, whether the SLO held, how fast it scaled out, against the plan;
- `picture`: the timeline as one self-contained HTML page with the SLO lines;
- `scope`: which models a rehearsal runs, and why the others are not rehearsed.
"""
