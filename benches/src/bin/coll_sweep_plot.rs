//! Draws the collective sweep of `benches/coll-sweep.sh`: a grid of panels, one row per case
//! (alltoall, alltoalls, broadcast, collect, fcollect, reduce_sum_f32, reduce_sum_i64, then any
//! other case in the input, by name) and one column per path (direct, tcp); in each, the time per call against
//! the bytes per PE, x in powers of 2, y logarithmic. The colour is the implementation (ours
//! Rust, ours C, oshmem, and oshmem with `--mca btl self,tcp` on the tcp path), the line and
//! marker the PE count; the legend above the panels says which is which.
//!
//! Reads lines `case,size,npes,path,rust_ns,c_ns,oshmem_ns,oshtcp_ns` (the script's
//! `summary.csv`, medians over its rounds; the header, malformed lines and empty or
//! non-positive figures are skipped) from stdin and writes a PNG to the path given; a second
//! argument, if given, is added to the title (the script's label of a run's conditions, as
//! "unaligned, OFFSET=1"). Build: `cargo build --release -p shmem-benches --features plot --bin
//! coll_sweep_plot`; run: `target/release/coll_sweep_plot coll_sweep.png [LABEL] <
//! summary.csv`.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::process::ExitCode;

/// The implementations, in the order of the figures after `path`: (legend label, colour).
const IMPLS: [(&str, RGBColor); 4] = [
    ("ours Rust", RED),
    ("ours C", RGBColor(255, 140, 0)),
    ("oshmem", BLUE),
    ("oshmem, btl tcp", RGBColor(0, 150, 0)),
];
/// The rows' order; other cases of the input follow these, by name.
const CASES: [&str; 7] = [
    "alltoall",
    "alltoalls",
    "broadcast",
    "collect",
    "fcollect",
    "reduce_sum_f32",
    "reduce_sum_i64",
];
/// The columns' order; other paths of the input follow, by name.
const PATHS: [&str; 2] = ["direct", "tcp"];
/// Pixels: a panel's width and height, and the strip above the panels (title and legend).
const PANEL: (u32, u32) = (760, 380);
const HEADER: u32 = 120;

/// Points (log2 of the bytes per PE, ns per call), sorted by size.
type Points = Vec<(f64, f64)>;

/// What the input holds.
#[derive(Default)]
struct Sweep {
    /// (case, path) -> (implementation: index into IMPLS, PE count) -> points.
    panels: BTreeMap<(String, String), BTreeMap<(usize, u32), Points>>,
    /// The PE counts present, ascending: the k-th is drawn in line style k.
    npes: BTreeSet<u32>,
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!(
            "usage: coll_sweep_plot OUT.png [LABEL] < case,size,npes,path,rust_ns,c_ns,oshmem_ns,oshtcp_ns lines"
        );
        return ExitCode::FAILURE;
    };
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("coll_sweep_plot: reading stdin: {e}");
        return ExitCode::FAILURE;
    }
    let label = std::env::args().nth(2);
    match draw(&path, &parse(&input), label.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("coll_sweep_plot: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse(input: &str) -> Sweep {
    let mut sweep = Sweep::default();
    for line in input.lines() {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != 4 + IMPLS.len() {
            continue;
        }
        let (Ok(size), Ok(npes)) = (f[1].parse::<u64>(), f[2].parse::<u32>()) else {
            continue;
        };
        if size == 0 {
            continue;
        }
        for (imp, figure) in f[4..].iter().enumerate() {
            let Ok(ns) = figure.parse::<f64>() else {
                continue;
            };
            if ns > 0.0 && ns.is_finite() {
                sweep
                    .panels
                    .entry((f[0].to_string(), f[3].to_string()))
                    .or_default()
                    .entry((imp, npes))
                    .or_default()
                    .push(((size as f64).log2(), ns));
                sweep.npes.insert(npes);
            }
        }
    }
    for lines in sweep.panels.values_mut() {
        for points in lines.values_mut() {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    sweep
}

/// `known` in its order where present in `found`, then the rest of `found`, sorted.
fn ordered<'a>(known: &[&str], found: impl Iterator<Item = &'a String>) -> Vec<String> {
    let found: BTreeSet<&String> = found.collect();
    let mut v: Vec<String> = known
        .iter()
        .filter(|k| found.iter().any(|f| f == *k))
        .map(|k| k.to_string())
        .collect();
    v.extend(
        found
            .into_iter()
            .filter(|f| !known.contains(&f.as_str()))
            .cloned(),
    );
    v
}

fn draw(path: &str, sweep: &Sweep, label: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    if sweep.panels.is_empty() {
        return Err("no figures in the input".into());
    }
    let cases = ordered(&CASES, sweep.panels.keys().map(|k| &k.0));
    let paths = ordered(&PATHS, sweep.panels.keys().map(|k| &k.1));
    let (rows, cols) = (cases.len(), paths.len());
    let width = PANEL.0 * cols as u32;
    let height = HEADER + PANEL.1 * rows as u32;
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, grid) = root.split_vertically(HEADER);
    legend(&header, sweep, label)?;
    // The same x range in every panel, so that the columns line up.
    let all = || sweep.panels.values().flat_map(|l| l.values()).flatten();
    let (xmin, xmax) = all().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let npes: Vec<u32> = sweep.npes.iter().copied().collect();
    for (k, area) in grid.split_evenly((rows, cols)).iter().enumerate() {
        let (case, p) = (&cases[k / cols], &paths[k % cols]);
        let caption = match p.as_str() {
            "tcp" => format!("{case}, tcp (UCX_TLS=tcp,self)"),
            _ => format!("{case}, {p}"),
        };
        let empty = BTreeMap::new();
        let lines = sweep
            .panels
            .get(&(case.clone(), p.clone()))
            .unwrap_or(&empty);
        let (ymin, ymax) = lines
            .values()
            .flatten()
            .fold((f64::MAX, f64::MIN), |(a, b), q| (a.min(q.1), b.max(q.1)));
        // Whole decades (plotters' log axis labels those evenly; a narrower range gets crowded
        // or bare labels).
        let (ymin, ymax) = if ymin <= ymax {
            (
                10f64.powf((ymin / 1.1).log10().floor()),
                10f64.powf((ymax * 1.1).log10().ceil()),
            )
        } else {
            (1.0, 1e3) // no figures: an empty panel
        };
        let mut chart = ChartBuilder::on(area)
            .caption(caption, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(xmin - 0.5..xmax + 0.5, (ymin..ymax).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("bytes per PE")
            .y_desc("time per call")
            .x_labels(12)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 15))
            .x_label_formatter(&|x| size_label(*x))
            .y_label_formatter(&|y| time_label(*y))
            .draw()?;
        for ((imp, n), points) in lines {
            let style = npes.iter().position(|m| m == n).unwrap_or(0);
            let color = IMPLS[*imp].1;
            for e in line(points.clone(), color, style) {
                chart.plotting_area().draw(&e)?;
            }
            for e in markers(points, color, style) {
                chart.plotting_area().draw(&e)?;
            }
        }
    }
    root.present()?;
    Ok(())
}

/// The strip above the panels: the title (with `label` after it, if any), then the colours of
/// the implementations and the lines and markers of the PE counts.
fn legend(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    sweep: &Sweep,
    label: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let title = match label {
        Some(l) => format!("Collectives by size (benches/coll-sweep.sh), {l}"),
        None => "Collectives by size (benches/coll-sweep.sh)".to_string(),
    };
    area.draw(&Text::new(title, (12, 8), ("sans-serif", 22)))?;
    area.draw(&Text::new(
        "time per call: the median over rounds of each run's median",
        (12, 36),
        ("sans-serif", 16),
    ))?;
    let font = TextStyle::from(("sans-serif", 17).into_font());
    let used: BTreeSet<usize> = sweep
        .panels
        .values()
        .flat_map(|l| l.keys().map(|k| k.0))
        .collect();
    // First row: the colours.
    let (mut x, y) = (12, 72);
    area.draw(&Text::new("colour:", (x, y - 9), font.clone()))?;
    x += 64;
    for (imp, (label, color)) in IMPLS.iter().enumerate() {
        if !used.contains(&imp) {
            continue;
        }
        area.draw(&PathElement::new(
            vec![(x, y), (x + 36, y)],
            color.stroke_width(3),
        ))?;
        x += 44;
        area.draw(&Text::new(*label, (x, y - 9), font.clone()))?;
        x += area.estimate_text_size(label, &font)?.0 as i32 + 24;
    }
    // Second row: the lines.
    let (mut x, y) = (12, 100);
    area.draw(&Text::new("line:", (x, y - 9), font.clone()))?;
    x += 64;
    for (style, n) in sweep.npes.iter().enumerate() {
        let sample = vec![(x, y), (x + 20, y), (x + 40, y), (x + 60, y)];
        for e in line(sample.clone(), BLACK, style) {
            area.draw(&e)?;
        }
        for e in markers(&sample[1..3], BLACK, style) {
            area.draw(&e)?;
        }
        x += 68;
        let label = format!("{n} PEs");
        area.draw(&Text::new(label.clone(), (x, y - 9), font.clone()))?;
        x += area.estimate_text_size(&label, &font)?.0 as i32 + 24;
    }
    Ok(())
}

/// The line through `points` in the style of the `style`-th PE count: solid, dashed, dotted,
/// then the same three thinner.
fn line<'a, C: Clone + 'static>(
    points: Vec<C>,
    color: RGBColor,
    style: usize,
) -> Vec<DynElement<'a, BitMapBackend<'a>, C>> {
    let s = color.stroke_width(if style < 3 { 2 } else { 1 });
    match style % 3 {
        0 => vec![PathElement::new(points, s).into_dyn()],
        1 => vec![DashedPathElement::new(points, 10, 6, s).into_dyn()],
        _ => vec![DashedPathElement::new(points, 3, 4, s).into_dyn()],
    }
}

/// The markers of the `style`-th PE count at `points`: circles, triangles, crosses.
fn markers<'a, C: Clone + 'static>(
    points: &[C],
    color: RGBColor,
    style: usize,
) -> Vec<DynElement<'a, BitMapBackend<'a>, C>> {
    points
        .iter()
        .map(|p| match style % 3 {
            0 => Circle::new(p.clone(), 3, color.filled()).into_dyn(),
            1 => TriangleMarker::new(p.clone(), 5, color.filled()).into_dyn(),
            _ => Cross::new(p.clone(), 4, color.stroke_width(2)).into_dyn(),
        })
        .collect()
}

/// A tick label of the x axis (log2 of the bytes): `8 B`, `64 KiB`, `4 MiB`; none between
/// powers of 2.
fn size_label(x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 || x < 0.0 {
        return String::new();
    }
    let b = 1u64 << (x.round() as u32).min(62);
    match b {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// A tick label of the y axis: `500 ns`, `2 µs`, `1.5 ms`, `2 s`.
fn time_label(ns: f64) -> String {
    let (v, unit) = match ns {
        t if t >= 1e9 => (t / 1e9, "s"),
        t if t >= 1e6 => (t / 1e6, "ms"),
        t if t >= 1e3 => (t / 1e3, "µs"),
        t => (t, "ns"),
    };
    // Up to 3 significant digits, without trailing zeros.
    let s = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s} {unit}")
}
