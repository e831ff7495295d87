//! Draws the message-rate sweep of `benches/msg-rate.sh`: four panels (put, get, put_nbi,
//! get_nbi), messages per second against the message size, both axes logarithmic, one line per
//! implementation and path (ours Rust, ours C, oshmem; direct solid, tcp thin).
//!
//! Reads lines `impl,path,case,size,msgs_per_s` (the script's `summary.csv`, medians over its
//! rounds; other lines and non-positive values are skipped) from stdin and writes a PNG to the
//! path given. Build: `cargo build --release -p shmem-benches --features plot --bin
//! msg_rate_plot`; run: `target/release/msg_rate_plot msg_rate.png < summary.csv`.

use plotters::prelude::*;
use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;

/// (impl, legend label, colour), in legend order.
const IMPLS: [(&str, &str, RGBColor); 3] = [
    ("rust", "ours Rust", RED),
    ("c", "ours C", RGBColor(255, 140, 0)),
    ("oshmem", "oshmem", BLUE),
];
const CASES: [&str; 4] = ["put", "get", "put_nbi", "get_nbi"];
const PATHS: [&str; 2] = ["direct", "tcp"];

/// (impl, path, case) -> points (size, messages/s), sorted by size.
type Series = BTreeMap<(String, String, String), Vec<(f64, f64)>>;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: msg_rate_plot OUT.png < impl,path,case,size,msgs_per_s lines");
        return ExitCode::FAILURE;
    };
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("msg_rate_plot: reading stdin: {e}");
        return ExitCode::FAILURE;
    }
    match draw(&path, &parse(&input)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("msg_rate_plot: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse(input: &str) -> Series {
    let mut series = Series::new();
    for line in input.lines() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 5 {
            continue;
        }
        let (Ok(size), Ok(rate)) = (f[3].parse::<f64>(), f[4].parse::<f64>()) else {
            continue;
        };
        if size > 0.0 && rate > 0.0 && rate.is_finite() {
            series
                .entry((f[0].to_string(), f[1].to_string(), f[2].to_string()))
                .or_default()
                .push((size, rate));
        }
    }
    for points in series.values_mut() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

fn draw(path: &str, series: &Series) -> Result<(), Box<dyn std::error::Error>> {
    if series.is_empty() {
        return Err("no message-rate points in the input".into());
    }
    let pts = || series.values().flatten();
    let smax = pts().fold(1.0f64, |m, p| m.max(p.0));
    let (rmin, rmax) = pts().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let root = BitMapBackend::new(path, (1400, 1000)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Message rate: a window of messages to consecutive offsets of one peer, then quiet \
         (benches/msg-rate.sh); thick: direct, thin: tcp",
        ("sans-serif", 20),
    )?;
    for (k, (case, area)) in CASES
        .iter()
        .zip(root.split_evenly((2, 2)).iter())
        .enumerate()
    {
        let mut chart = ChartBuilder::on(area)
            .caption(*case, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(
                (0.7..smax * 1.4).log_scale(),
                (rmin / 1.5..rmax * 1.5).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_desc("message size, bytes")
            .y_desc("messages/s")
            .x_label_formatter(&|x| size_label(*x))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .draw()?;
        for (imp, label, color) in IMPLS {
            for p in PATHS {
                let key = (imp.to_string(), p.to_string(), case.to_string());
                let Some(points) = series.get(&key) else {
                    continue;
                };
                let width = if p == "direct" { 2 } else { 1 };
                chart.draw_series(
                    points
                        .iter()
                        .map(|&xy| Circle::new(xy, width + 1, color.filled())),
                )?;
                let s = chart
                    .draw_series(LineSeries::new(points.clone(), color.stroke_width(width)))?;
                if k == 0 {
                    s.label(format!("{label} {p}")).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(width))
                    });
                }
            }
        }
        if k == 0 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::LowerLeft)
                .draw()?;
        }
    }
    root.present()?;
    Ok(())
}

/// A tick label of the size axis (the log scale puts ticks at powers of 10): `10 B`,
/// `1 kB`, `1 MB`.
fn size_label(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.0} MB", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0} kB", x / 1e3)
    } else {
        format!("{x:.0} B")
    }
}
