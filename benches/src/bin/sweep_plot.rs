//! Draws the copy sweep (`copy_sweep` and `benches/c/copy_sweep.c`) as heat maps: copy time
//! relative to the best time of the same copy and size, against the distance
//! d = (destination - source) mod 4096 (columns) and the size and source alignment (rows).
//!
//! Five panels: ours put (+ quiet), ours get, oshmem put (+ quiet), oshmem get, and glibc's
//! `memcpy` between two private buffers (from the Rust run). A cell's colour is time / best on a
//! log scale from 1 (white) to 32 and more (dark red), where best is the fastest point of that
//! panel and size (over all d and every source alignment); cells at 1.5x or more carry the ratio.
//!
//! Reads lines `impl,op,size,d,src_align,ns` (impl `ours` or `oshmem`; op `put`, `get` or
//! `memcpy`; other lines are skipped) from stdin and writes a PNG to the path given.
//! `benches/run.sh` feeds it the medians over its rounds. Build: `cargo build --release -p
//! shmem-benches --features plot --bin sweep_plot`.

use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::process::ExitCode;

/// (impl, op, panel title) of each panel, top to bottom.
const PANELS: [(&str, &str, &str); 5] = [
    ("ours", "put", "ours: put + quiet (direct path)"),
    ("ours", "get", "ours: get (direct path)"),
    ("oshmem", "put", "oshmem: shmem_putmem + shmem_quiet"),
    ("oshmem", "get", "oshmem: shmem_getmem"),
    (
        "ours",
        "memcpy",
        "glibc memcpy, private buffers (reference)",
    ),
];

/// Ratio at which the colour scale saturates.
const SATURATE: f64 = 32.0;

/// One measured point: (impl, op, size, d, alignment) -> ns.
type Points = BTreeMap<(String, String, u64, u64, u64), f64>;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: sweep_plot OUT.png < impl,op,size,d,src_align,ns lines");
        return ExitCode::FAILURE;
    };
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("sweep_plot: reading stdin: {e}");
        return ExitCode::FAILURE;
    }
    match draw(&path, &parse(&input)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sweep_plot: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The points of `input`; malformed lines and non-positive times are skipped.
fn parse(input: &str) -> Points {
    let mut points = Points::new();
    for line in input.lines() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 6 {
            continue;
        }
        let (Ok(size), Ok(d), Ok(a), Ok(ns)) = (
            f[2].parse::<u64>(),
            f[3].parse::<u64>(),
            f[4].parse::<u64>(),
            f[5].parse::<f64>(),
        ) else {
            continue;
        };
        if ns > 0.0 && ns.is_finite() {
            points.insert((f[0].to_string(), f[1].to_string(), size, d, a), ns);
        }
    }
    points
}

/// "4 KiB"-style size.
fn hsize(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// White at ratio 1, through yellow and orange, to dark red at [`SATURATE`] (log scale).
fn colour(ratio: f64) -> RGBColor {
    let t = (ratio.max(1.0).ln() / SATURATE.ln()).min(1.0);
    let stops = [
        (0.0, (255.0, 255.0, 255.0)),
        (0.2, (255.0, 230.0, 120.0)),
        (0.5, (245.0, 130.0, 40.0)),
        (1.0, (120.0, 0.0, 0.0)),
    ];
    let mut k = 1;
    while k < stops.len() - 1 && t > stops[k].0 {
        k += 1;
    }
    let ((t0, c0), (t1, c1)) = (stops[k - 1], stops[k]);
    let u = ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
    let mix = |a: f64, b: f64| (a + (b - a) * u).round() as u8;
    RGBColor(mix(c0.0, c1.0), mix(c0.1, c1.1), mix(c0.2, c1.2))
}

fn draw(path: &str, points: &Points) -> Result<(), Box<dyn std::error::Error>> {
    if points.is_empty() {
        return Err("no sweep points in the input".into());
    }
    let ds: Vec<u64> = points
        .keys()
        .map(|k| k.3)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Rows: (size, alignment), small sizes at the top.
    let rows: Vec<(u64, u64)> = points
        .keys()
        .map(|k| (k.2, k.4))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (panel_h, width) = (40 + 26 * rows.len() as u32 + 60, 1300);
    let root =
        BitMapBackend::new(path, (width, 50 + panel_h * PANELS.len() as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(50);
    title.draw_text(
        "copy time / best time of that copy and size, against d = (dst - src) mod 4096; \
         rows: size, a = source address mod 4096",
        &("sans-serif", 18).into_text_style(&title),
        (15, 15),
    )?;
    for (area, &(imp, op, name)) in body
        .split_evenly((PANELS.len(), 1))
        .iter()
        .zip(PANELS.iter())
    {
        let mut chart = ChartBuilder::on(area)
            .caption(name, ("sans-serif", 17))
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(95)
            .build_cartesian_2d(0.0..ds.len() as f64, 0.0..rows.len() as f64)?;
        let d_label = |x: &f64| {
            let i = x.floor() as usize;
            if (*x - i as f64 - 0.5).abs() < 1e-6 {
                ds.get(i).map(|d| d.to_string()).unwrap_or_default()
            } else {
                String::new()
            }
        };
        let row_label = |y: &f64| {
            let i = y.floor() as usize;
            if (*y - i as f64 - 0.5).abs() < 1e-6 {
                // Row 0 is drawn at the top.
                rows.len()
                    .checked_sub(i + 1)
                    .and_then(|r| rows.get(r))
                    .map(|&(s, a)| format!("{} a={a}", hsize(s)))
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(2 * ds.len() + 1)
            .y_labels(2 * rows.len() + 1)
            .x_label_formatter(&d_label)
            .y_label_formatter(&row_label)
            .x_desc("d")
            .draw()?;
        for (r, &(size, a)) in rows.iter().enumerate() {
            let best = points
                .iter()
                .filter(|(k, _)| k.0 == imp && k.1 == op && k.2 == size)
                .map(|(_, &v)| v)
                .fold(f64::INFINITY, f64::min);
            let y = (rows.len() - 1 - r) as f64;
            for (c, &d) in ds.iter().enumerate() {
                let x = c as f64;
                let key = (imp.to_string(), op.to_string(), size, d, a);
                let Some(&ns) = points.get(&key) else {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x, y), (x + 1.0, y + 1.0)],
                        RGBColor(200, 200, 200).filled(),
                    )))?;
                    continue;
                };
                let ratio = ns / best;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    colour(ratio).filled(),
                )))?;
                if ratio >= 1.5 {
                    let fg = if ratio > 6.0 { WHITE } else { BLACK };
                    chart.draw_series(std::iter::once(Text::new(
                        format!("{ratio:.0}"),
                        (x + 0.3, y + 0.75),
                        ("sans-serif", 13).into_font().color(&fg),
                    )))?;
                }
            }
        }
    }
    root.present()?;
    Ok(())
}
