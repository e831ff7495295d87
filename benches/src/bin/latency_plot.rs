//! Draws put and get latency against message size, log-log: ours on the direct path, ours over
//! UCX (tcp) and Open MPI's OpenSHMEM.
//!
//! Reads lines `case,size_bytes,direct_ns,ucx_ns,oshmem_ns` (case `put + quiet` or `get`; `n/a`
//! or a non-positive value for a missing figure) from stdin and writes a PNG to the path given.
//! Series without any figure are left out. `benches/run.sh` feeds it. Build: `cargo build --release -p shmem-benches --features
//! plot --bin latency_plot`.

use plotters::prelude::*;
use std::io::Read;
use std::process::ExitCode;

type Series = Vec<(f64, f64)>;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: latency_plot OUT.png < case,size,direct_ns,ucx_ns,oshmem_ns lines");
        return ExitCode::FAILURE;
    };
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("latency_plot: reading stdin: {e}");
        return ExitCode::FAILURE;
    }
    match draw(&path, &input) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("latency_plot: {e}");
            ExitCode::FAILURE
        }
    }
}

fn draw(path: &str, input: &str) -> Result<(), Box<dyn std::error::Error>> {
    // (case, column after the size: 0 direct, 1 UCX, 2 oshmem, label, colour) -> points
    let names = [
        ("put + quiet", 0, "put + quiet, ours direct", RED),
        (
            "put + quiet",
            1,
            "put + quiet, ours UCX (tcp)",
            RGBColor(255, 140, 0),
        ),
        ("put + quiet", 2, "put + quiet, oshmem", MAGENTA),
        ("get", 0, "get, ours direct", BLUE),
        ("get", 1, "get, ours UCX (tcp)", GREEN),
        ("get", 2, "get, oshmem", CYAN),
    ];
    let mut series: Vec<Series> = vec![Vec::new(); names.len()];
    for line in input.lines() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 5 {
            continue;
        }
        let Ok(size) = f[1].parse::<f64>() else {
            continue;
        };
        for (k, (case, imp, _, _)) in names.iter().enumerate() {
            if f[0] == *case
                && let Ok(v) = f[2 + imp].parse::<f64>()
                && v > 0.0
            {
                series[k].push((size, v));
            }
        }
    }
    let all: Vec<(f64, f64)> = series.iter().flatten().copied().collect();
    if all.is_empty() {
        return Err("no put/get points in the input".into());
    }
    let (xmin, xmax) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (ymin, ymax) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));

    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "put + quiet / get latency vs size, 2 PEs on one node",
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (xmin / 1.5..xmax * 1.5).log_scale(),
            (ymin / 1.5..ymax * 1.5).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("message size (bytes)")
        .y_desc("latency (ns)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    for (k, (_, _, label, color)) in names.iter().enumerate() {
        if series[k].is_empty() {
            continue;
        }
        let color = *color;
        chart
            .draw_series(LineSeries::new(series[k].clone(), color.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart.draw_series(series[k].iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
