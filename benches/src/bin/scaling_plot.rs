//! Draws the scaling run (`benches/scaling.sh`, program `benches/c/scaling.c`) against the PE
//! count, log x: six panels, `shmem_init` time on PE 0, Pss per PE at the end of the job, the
//! peak growth of `/dev/shm`, `shmem_barrier_all`, `shmem_alltoall64` of 8 B per PE, and the
//! all-to-all put round (first contact with every peer, and the steady state), one line per
//! variant (ours, oshmem, each direct and over tcp, and ours across network-namespace hosts).
//!
//! Reads lines `variant,npes,metric,value` (`benches/scaling.sh`'s `summary.csv`, the medians
//! over its rounds; other lines, unknown variants and non-positive values are skipped) from stdin
//! and writes a PNG to the path given. Build: `cargo build --release -p shmem-benches --features
//! plot --bin scaling_plot`; run: `target/release/scaling_plot scaling.png <
//! target/bench-results-scaling/summary.csv` (`benches/scaling.sh` copies its plot to
//! `benches/results/scaling.png`).

use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;

/// (variant, legend label, colour), in legend order.
const VARIANTS: [(&str, &str, RGBColor); 5] = [
    ("ours", "ours (direct)", RED),
    ("ours-tcp", "ours UCX (tcp)", RGBColor(255, 140, 0)),
    ("oshmem", "oshmem", MAGENTA),
    ("oshmem-tcp", "oshmem tcp", BLUE),
    ("ours-hosts", "ours, netns hosts x 2 PEs", GREEN),
];

/// A panel: title, y-axis label, the metrics drawn (the first with circles and a thick line,
/// a second with crosses and a thin one), the factor from the metric's unit to the axis's, and
/// whether the y axis is logarithmic.
struct Panel {
    title: &'static str,
    y_desc: &'static str,
    metrics: &'static [&'static str],
    scale: f64,
    log_y: bool,
}

const PANELS: [Panel; 6] = [
    Panel {
        title: "shmem_init on PE 0",
        y_desc: "ms",
        metrics: &["init_ns"],
        scale: 1e-6,
        log_y: true,
    },
    Panel {
        title: "memory per PE: Pss at the end (mean over PEs)",
        y_desc: "MiB",
        metrics: &["pss_end_mean_bytes"],
        scale: 1.0 / 1_048_576.0,
        log_y: false,
    },
    Panel {
        title: "/dev/shm: peak growth during the job",
        y_desc: "MiB",
        metrics: &["devshm_peak_bytes"],
        scale: 1.0 / 1_048_576.0,
        log_y: true,
    },
    Panel {
        title: "shmem_barrier_all",
        y_desc: "us",
        metrics: &["barrier_ns"],
        scale: 1e-3,
        log_y: true,
    },
    Panel {
        title: "shmem_alltoall64, 8 B per PE",
        y_desc: "us",
        metrics: &["alltoall_ns"],
        scale: 1e-3,
        log_y: true,
    },
    Panel {
        title: "all-to-all put round: o steady, x first contact",
        y_desc: "us",
        metrics: &["put_steady_ns", "put_first_ns"],
        scale: 1e-3,
        log_y: true,
    },
];

/// (variant, metric) -> points (PEs, value in the metric's unit), sorted by PEs.
type Series = BTreeMap<(String, String), Vec<(f64, f64)>>;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: scaling_plot OUT.png < variant,npes,metric,value lines");
        return ExitCode::FAILURE;
    };
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("scaling_plot: reading stdin: {e}");
        return ExitCode::FAILURE;
    }
    match draw(&path, &parse(&input)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scaling_plot: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The series of `input`; malformed lines, unknown variants and non-positive values are skipped.
fn parse(input: &str) -> Series {
    let mut series = Series::new();
    for line in input.lines() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 4 || !VARIANTS.iter().any(|v| v.0 == f[0]) {
            continue;
        }
        let (Ok(n), Ok(v)) = (f[1].parse::<f64>(), f[3].parse::<f64>()) else {
            continue;
        };
        if n > 0.0 && v > 0.0 && v.is_finite() {
            series
                .entry((f[0].to_string(), f[2].to_string()))
                .or_default()
                .push((n, v));
        }
    }
    for points in series.values_mut() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

fn draw(path: &str, series: &Series) -> Result<(), Box<dyn std::error::Error>> {
    if series.is_empty() {
        return Err("no scaling points in the input".into());
    }
    let nmax = series.values().flatten().fold(1.0f64, |m, p| m.max(p.0));
    let root = BitMapBackend::new(path, (1500, 950)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Scaling against the PE count (benches/scaling.sh, benches/c/scaling.c)",
        ("sans-serif", 24),
    )?;
    let areas = root.split_evenly((2, 3));
    for (k, (panel, area)) in PANELS.iter().zip(areas.iter()).enumerate() {
        draw_panel(area, panel, series, nmax, k == 0)?;
    }
    root.present()?;
    Ok(())
}

/// One panel, with the legend when `legend` is set.
fn draw_panel(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    panel: &Panel,
    series: &Series,
    nmax: f64,
    legend: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    // (label, colour, metric index, points in the axis's unit)
    let mut lines = Vec::new();
    for (variant, label, color) in VARIANTS {
        for (m, metric) in panel.metrics.iter().enumerate() {
            if let Some(points) = series.get(&(variant.to_string(), metric.to_string())) {
                let pts: Vec<(f64, f64)> =
                    points.iter().map(|&(n, v)| (n, v * panel.scale)).collect();
                lines.push((label, color, m, pts));
            }
        }
    }
    let ys = || lines.iter().flat_map(|l| l.3.iter().map(|p| p.1));
    let (ymin, ymax) = ys().fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    if lines.is_empty() {
        area.titled(&format!("{}: no data", panel.title), ("sans-serif", 18))?;
        return Ok(());
    }
    let mut chart = ChartBuilder::on(area);
    chart
        .caption(panel.title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60);
    let x_range = (0.8..nmax * 1.25).log_scale();
    // Both arms draw the same lines; only the y coordinate's type differs.
    if panel.log_y {
        let mut c = chart.build_cartesian_2d(x_range, (ymin / 1.5..ymax * 1.5).log_scale())?;
        c.configure_mesh()
            .x_desc("PEs")
            .y_desc(panel.y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| tick(*y))
            .draw()?;
        for (label, color, m, pts) in &lines {
            let color = *color;
            let s = c.draw_series(LineSeries::new(
                pts.clone(),
                color.stroke_width(if *m == 0 { 2 } else { 1 }),
            ))?;
            if *m == 0 {
                s.label(*label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            }
            if *m == 0 {
                c.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            } else {
                c.draw_series(pts.iter().map(|&p| Cross::new(p, 4, color.stroke_width(2))))?;
            }
        }
        if legend {
            c.configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }
    } else {
        let mut c = chart.build_cartesian_2d(x_range, 0.0..ymax * 1.15)?;
        c.configure_mesh()
            .x_desc("PEs")
            .y_desc(panel.y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| tick(*y))
            .draw()?;
        for (_, color, m, pts) in &lines {
            let color = *color;
            c.draw_series(LineSeries::new(
                pts.clone(),
                color.stroke_width(if *m == 0 { 2 } else { 1 }),
            ))?;
            c.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
    }
    Ok(())
}

/// An axis label with as many decimals as its size needs.
fn tick(y: f64) -> String {
    if y >= 100.0 {
        format!("{y:.0}")
    } else if y >= 1.0 {
        format!("{y:.1}")
    } else {
        format!("{y:.3}")
    }
}
