//! Whether the page is for playing or for setting up a position, the one
//! switch the toolbar, the keyboard and the editor all turn.

/// What the play area shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Playing,
    Editing,
    /// The player left the editor another way than its Done button (the
    /// toolbar button, "e"): the editor checks its position as Done does,
    /// then closes, or stays open with the reason (back to `Editing`).
    Leaving,
}

impl Mode {
    /// The toolbar button and "e": open the editor, or ask it to leave.
    pub fn toggle_editor(&mut self) {
        *self = match self {
            Mode::Playing => Mode::Editing,
            Mode::Editing | Mode::Leaving => Mode::Leaving,
        };
    }
}
