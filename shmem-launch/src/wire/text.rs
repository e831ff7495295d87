//! Values written in messages: PE lists, durations in seconds and in milliseconds.

/// Milliseconds of `d` for a [`Msg::Welcome`](super::Msg::Welcome), saturating.
pub fn millis_u32(d: std::time::Duration) -> u32 {
    d.as_millis().min(u128::from(u32::MAX)) as u32
}

/// PE numbers for messages: `"1, 4"`; runs of three or more consecutive numbers as `"0-99"`, so
/// that a message about a whole host's PEs stays short (`"0-99, 200-299"`).
pub fn pe_list(pes: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < pes.len() {
        let mut j = i;
        while j + 1 < pes.len() && pes[j].checked_add(1) == Some(pes[j + 1]) {
            j += 1;
        }
        if j - i >= 2 {
            out.push(format!("{}-{}", pes[i], pes[j]));
        } else {
            out.extend(pes[i..=j].iter().map(|p| p.to_string()));
        }
        i = j + 1;
    }
    out.join(", ")
}

/// Formats a duration in seconds for messages (`"10 s"`, `"0.5 s"`).
pub fn secs(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pe_lists_fold_runs_of_three_or_more() {
        assert_eq!(pe_list(&[]), "");
        assert_eq!(pe_list(&[3]), "3");
        assert_eq!(pe_list(&[2, 3]), "2, 3");
        assert_eq!(pe_list(&[0, 1, 2, 5, 7, 8, 9, 10]), "0-2, 5, 7-10");
        let host: Vec<usize> = (0..100).chain(200..300).collect();
        assert_eq!(pe_list(&host), "0-99, 200-299");
        assert_eq!(
            pe_list(&[usize::MAX - 1, usize::MAX]),
            format!("{}, {}", usize::MAX - 1, usize::MAX)
        );
    }
}
