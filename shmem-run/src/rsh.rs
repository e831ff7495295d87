//! Start commands for PEs on other hosts: the `--rsh` template, the remote command it carries,
//! and shell quoting.
//!
//! The template is split into words like a shell would (quotes and backslashes, no expansions).
//! `{host}` is replaced by the host's name in every word. If a word contains `{cmd}`, it is
//! replaced by the whole remote command as one shell-quoted string (what ssh needs: it hands the
//! string to the remote shell); otherwise the remote command's words are appended as separate
//! arguments (what `ip netns exec`, `docker exec` or a wrapper script needs).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// The start command when neither `--rsh` nor `SHMEM_RSH` is given.
pub const DEFAULT_TEMPLATE: &str = "ssh -o BatchMode=yes {host} {cmd}";

/// A parsed start-command template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    words: Vec<String>,
    has_cmd: bool,
}

impl Template {
    /// Splits `text` into words; it must name `{host}`.
    pub fn parse(text: &str) -> Result<Template, String> {
        let words = split_words(text)?;
        if words.is_empty() {
            return Err("the start command template is empty".into());
        }
        if !words.iter().any(|w| w.contains("{host}")) {
            return Err(format!(
                "the start command template {text:?} does not contain {{host}}, so every host \
                 would get the same command"
            ));
        }
        let has_cmd = words.iter().any(|w| w.contains("{cmd}"));
        Ok(Template { words, has_cmd })
    }

    /// The command that runs `remote` on `host`: program first.
    pub fn command(&self, host: &str, remote: &[OsString]) -> Vec<OsString> {
        let quoted = self.has_cmd.then(|| shell_line(remote));
        let mut argv: Vec<OsString> = self
            .words
            .iter()
            .map(|w| {
                let w = w.replace("{host}", host);
                match &quoted {
                    Some(line) => OsString::from_vec(replace(w.as_bytes(), b"{cmd}", line)),
                    None => OsString::from(w),
                }
            })
            .collect();
        if !self.has_cmd {
            argv.extend(remote.iter().cloned());
        }
        argv
    }
}

/// Splits like a POSIX shell without expansions: blanks separate words; '...' is literal;
/// "..." is literal except for \" \\ \$ \`; a backslash outside quotes takes the next character.
fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(format!("unterminated ' in {text:?}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(format!("unterminated \" in {text:?}")),
                        },
                        Some(c) => word.push(c),
                        None => return Err(format!("unterminated \" in {text:?}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err(format!("{text:?} ends with a lone backslash")),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

fn replace(hay: &[u8], pat: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len() + with.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(pat) {
            out.extend_from_slice(with);
            i += pat.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// One word as a POSIX shell reads it back: unchanged when it has only safe characters, else
/// in single quotes (a quote inside becomes '\'').
pub fn quote(word: &OsStr) -> Vec<u8> {
    let b = word.as_bytes();
    let safe = |c: &u8| c.is_ascii_alphanumeric() || b"_-+=:,./@%^".contains(c);
    if !b.is_empty() && b.iter().all(safe) {
        return b.to_vec();
    }
    let mut out = Vec::with_capacity(b.len() + 2);
    out.push(b'\'');
    for &c in b {
        if c == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(c);
        }
    }
    out.push(b'\'');
    out
}

/// The words as one shell command line.
pub fn shell_line(words: &[OsString]) -> Vec<u8> {
    let mut line = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            line.push(b' ');
        }
        line.extend(quote(w));
    }
    line
}

/// The words as a shell command line, for messages.
pub fn display(words: &[OsString]) -> String {
    String::from_utf8_lossy(&shell_line(words)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn templates_split_like_a_shell() {
        assert_eq!(
            split_words(r#"ssh -i "/my keys/id" -o 'A B' x\ y {host}"#).unwrap(),
            ["ssh", "-i", "/my keys/id", "-o", "A B", "x y", "{host}"]
        );
        assert!(split_words("ssh 'open").is_err());
        assert!(split_words("ssh \"open").is_err());
        assert!(Template::parse("ssh node1 {cmd}").is_err());
        assert!(Template::parse("  ").is_err());
    }

    #[test]
    fn cmd_is_one_quoted_word_else_argv_is_appended() {
        let remote = os(&["env", "A=it's", "prog", "two words", ""]);
        let ssh = Template::parse(DEFAULT_TEMPLATE).unwrap();
        assert_eq!(
            ssh.command("n1", &remote),
            os(&[
                "ssh",
                "-o",
                "BatchMode=yes",
                "n1",
                "env 'A=it'\\''s' prog 'two words' ''"
            ])
        );
        let netns = Template::parse("bash /x/netns-hosts.sh exec {host}").unwrap();
        let mut want = os(&["bash", "/x/netns-hosts.sh", "exec", "10.0.0.2"]);
        want.extend(remote.iter().cloned());
        assert_eq!(netns.command("10.0.0.2", &remote), want);
        let user = Template::parse("ssh me@{host} -- {cmd}").unwrap();
        assert_eq!(user.command("h", &os(&["true"]))[1], "me@h");
    }

    #[test]
    fn quoting_round_trips_through_sh() {
        let words = os(&["a b", "it's", "$HOME", "`x`", "\\", "\"q\"", "*", ""]);
        let line = display(&words);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("for w in {line}; do printf '[%s]' \"$w\"; done"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "[a b][it's][$HOME][`x`][\\][\"q\"][*][]"
        );
    }
}
