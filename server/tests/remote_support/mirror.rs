//! A plain HTTP mirror of a table directory on loopback, for the tests of
//! tables on HTTP (`http_mirror.rs`, `remote_variants.rs`).

use std::{
    net::SocketAddr,
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use axum::{Router, extract::Request, middleware::Next, response::Html, routing::get};

/// An HTTP mirror of `dir` (at `/NAME/`, NAME its own) on loopback: an index page linking its files
/// (as nginx's `autoindex` does), the files with Range; counts ranged GETs.
pub struct Mirror {
    addr: SocketAddr,
    name: String,
    /// Ranged GETs answered so far.
    pub ranged_gets: Arc<AtomicU64>,
    _runtime: tokio::runtime::Runtime,
}

impl Mirror {
    pub fn start(dir: &Path) -> Mirror {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read the tables")
            .filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string()))
            .collect();
        names.sort();
        let links: String = names
            .iter()
            .map(|name| format!("<a href=\"{name}\">{name}</a>\n"))
            .collect();
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a directory name")
            .to_string();
        let index =
            format!("<html><body><pre><a href=\"../\">../</a>\n{links}</pre></body></html>");
        let ranged_gets = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&ranged_gets);
        let app = Router::new()
            .route(
                &format!("/{name}/"),
                get(move || async move { Html(index) }),
            )
            .fallback_service(tower_http::services::ServeDir::new(
                dir.parent().expect("the tables' parent"),
            ))
            .layer(axum::middleware::from_fn(
                move |request: Request, next: Next| {
                    let counted = Arc::clone(&counted);
                    async move {
                        if request.headers().contains_key("range") {
                            counted.fetch_add(1, Ordering::Relaxed);
                        }
                        next.run(request).await
                    }
                },
            ));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            axum::serve(listener, app).await.expect("the mirror serves");
        });
        Mirror {
            addr,
            name,
            ranged_gets,
            _runtime: runtime,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/{}/", self.addr, self.name)
    }
}
