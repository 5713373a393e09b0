//! What the server's SVG charts share (`/stats/dtz.svg`, `/review/chart.svg`):
//! the opening with its size, its title for screen readers and the text
//! style in light and dark, and coordinates in integer tenths of a pixel
//! (no float formatting, so the same chart is the same bytes).

/// The chart's opening `<svg>`, `<title>` and `<style>`; `style` and `dark`
/// are the chart's own classes in light and in dark mode.
pub fn open(width: i64, height: i64, title: &str, style: &str, dark: &str) -> String {
    format!(
        concat!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img">"#,
            "<title>{title}</title>",
            "<style>text{{font:11px system-ui,sans-serif;fill:#1d1d1f}}{style}",
            "@media (prefers-color-scheme:dark){{text{{fill:#e8e8ea}}{dark}}}</style>",
        ),
        w = width,
        h = height,
        title = title,
        style = style,
        dark = dark,
    )
}

/// Tenths of a pixel as SVG writes them ("12.3").
pub fn tenths(v: i64) -> String {
    format!("{}.{}", v / 10, v % 10)
}
