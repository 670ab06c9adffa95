//! One status line at the bottom of a terminal, below the child's output:
//! the bottom row is kept out of the scrolling region (DECSTBM), so the
//! child's bytes scroll above it unchanged and the line is redrawn in place
//! (cursor saved and restored around each draw). Only for a terminal; the
//! caller decides whether there is one and passes its size.

use std::io::{self, Write};

/// The terminal size: rows and columns.
pub type Size = (u16, u16);

/// Draws and clears the status line.
pub struct StatusLine {
    size: Size,
    active: bool,
    last: String,
}

impl StatusLine {
    /// A status line for a terminal of `size`.
    pub fn new(size: Size) -> StatusLine {
        StatusLine {
            size,
            active: false,
            last: String::new(),
        }
    }

    fn reserve(&mut self, w: &mut dyn Write) -> io::Result<()> {
        let rows = self.size.0;
        // A blank line to make room, then the scrolling region above the last row,
        // and the cursor back inside it.
        write!(w, "\n\x1b7\x1b[1;{}r\x1b8\x1b[1A", rows - 1)?;
        self.active = true;
        Ok(())
    }

    /// Draws `text` (cut to the width); `size` is the terminal's size now.
    pub fn draw(&mut self, w: &mut dyn Write, size: Size, text: &str) -> io::Result<()> {
        if size.0 < 3 || size.1 < 10 {
            return Ok(());
        }
        if size != self.size || !self.active {
            if self.active {
                write!(w, "\x1b7\x1b[r\x1b8")?;
            }
            self.size = size;
            self.reserve(w)?;
        }
        let cut: String = text.chars().take(size.1 as usize - 1).collect();
        write!(w, "\x1b7\x1b[{};1H\x1b[2K\x1b[7m{cut}\x1b[0m\x1b8", size.0)?;
        self.last = cut;
        w.flush()
    }

    /// Gives the row back: resets the scrolling region and clears the line.
    pub fn clear(&mut self, w: &mut dyn Write) -> io::Result<()> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        write!(w, "\x1b7\x1b[r\x1b[{};1H\x1b[2K\x1b8", self.size.0)?;
        w.flush()
    }

    /// The last text drawn.
    pub fn last(&self) -> &str {
        &self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_in_the_reserved_row_and_gives_it_back() {
        let mut s = StatusLine::new((24, 80));
        let mut out = Vec::new();
        s.draw(&mut out, (24, 80), "weight load 31/81 · 15:37")
            .unwrap();
        let t = String::from_utf8(out).unwrap();
        assert!(t.contains("\x1b[1;23r"), "{t:?}");
        assert!(t.contains("\x1b[24;1H"), "{t:?}");
        let mut out = Vec::new();
        s.draw(&mut out, (30, 80), &"x".repeat(200)).unwrap();
        let t = String::from_utf8(out).unwrap();
        assert!(
            t.contains("\x1b[1;29r") && !t.contains(&"x".repeat(80)),
            "{t:?}"
        );
        let mut out = Vec::new();
        s.clear(&mut out).unwrap();
        assert!(String::from_utf8(out).unwrap().contains("\x1b[r"));
    }
}
