//! One table, written as Markdown or as HTML.

use std::fmt::Write as _;

/// How a column's cells are aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Left (text).
    Left,
    /// Right (numbers).
    Right,
}

/// A table: named, aligned columns and rows of cells (each row may carry an HTML class).
#[derive(Clone, Debug, Default)]
pub struct Table {
    columns: Vec<(String, Align)>,
    rows: Vec<(Option<&'static str>, Vec<String>)>,
}

impl Table {
    /// A table with these columns.
    pub fn new<S: Into<String>>(columns: impl IntoIterator<Item = (S, Align)>) -> Table {
        Table {
            columns: columns.into_iter().map(|(n, a)| (n.into(), a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push((None, cells));
    }

    /// Appends a row with an HTML class (`best`, `miss`, ...; Markdown ignores it).
    pub fn row_with_class(&mut self, class: Option<&'static str>, cells: Vec<String>) {
        self.rows.push((class, cells));
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// GitHub Markdown: a header line, the alignment line, one line per row. Cells are
    /// written as they are (they may hold Markdown).
    pub fn markdown(&self) -> String {
        let mut s = String::from("|");
        for (name, _) in &self.columns {
            let _ = write!(s, " {name} |");
        }
        s.push_str("\n|");
        for (_, a) in &self.columns {
            s.push_str(match a {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        s.push('\n');
        for (_, cells) in &self.rows {
            s.push('|');
            for c in cells {
                let _ = write!(s, " {c} |");
            }
            s.push('\n');
        }
        s
    }

    /// An HTML `<table>`: a header row of `<th>`, then one `<tr>` per row; left-aligned cells
    /// get `class="l"`. Names and cells are escaped.
    pub fn html(&self) -> String {
        let mut s = String::from("<table><tr>");
        for (name, _) in &self.columns {
            let _ = write!(s, "<th>{}</th>", escape(name));
        }
        s.push_str("</tr>\n");
        for (class, cells) in &self.rows {
            match class {
                Some(c) => {
                    let _ = write!(s, "<tr class=\"{c}\">");
                }
                None => s.push_str("<tr>"),
            }
            for (i, c) in cells.iter().enumerate() {
                let left = self.columns.get(i).is_some_and(|(_, a)| *a == Align::Left);
                let _ = write!(
                    s,
                    "<td{}>{}</td>",
                    if left { " class=\"l\"" } else { "" },
                    escape(c)
                );
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
        s
    }
}

/// `s` with `&`, `<` and `>` escaped for HTML text.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `s` escaped for an HTML attribute's value in double quotes: [`escape`]'s, and `"`.
pub fn escape_attr(s: &str) -> String {
    escape(s).replace('"', "&quot;")
}

/// The file name `name` as a relative URL: every byte but ASCII letters, digits and `-._~`
/// percent-encoded, so that a `?`, `#`, `%` or quote in a graph's name still names its file.
pub fn url_path(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_and_urls_are_escaped() {
        assert_eq!(
            escape_attr("<b>x&y,\"q\""),
            "&lt;b&gt;x&amp;y,&quot;q&quot;"
        );
        assert_eq!(
            url_path("histogram-<b>x&y,\"q\".svg"),
            "histogram-%3Cb%3Ex%26y%2C%22q%22.svg"
        );
        assert_eq!(url_path("histogram-é 1.svg"), "histogram-%C3%A9%201.svg");
    }

    fn two_by_two() -> Table {
        let mut t = Table::new([("impl", Align::Left), ("items/s", Align::Right)]);
        t.row(vec!["spin".into(), "1.5 M".into()]);
        t.row_with_class(Some("best"), vec!["a<b".into(), "2".into()]);
        t
    }

    #[test]
    fn markdown_of_a_two_by_two_table() {
        assert_eq!(
            two_by_two().markdown(),
            "| impl | items/s |\n|---|---:|\n| spin | 1.5 M |\n| a<b | 2 |\n"
        );
    }

    #[test]
    fn html_of_a_two_by_two_table() {
        assert_eq!(
            two_by_two().html(),
            "<table><tr><th>impl</th><th>items/s</th></tr>\n\
             <tr><td class=\"l\">spin</td><td>1.5 M</td></tr>\n\
             <tr class=\"best\"><td class=\"l\">a&lt;b</td><td>2</td></tr>\n\
             </table>\n"
        );
        assert_eq!(two_by_two().len(), 2);
    }
}
