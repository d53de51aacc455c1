//! The one table of methods: what each request is answered with, on the session's terms (after the
//! handshake) or on its own (2026-07-28, [`crate::stateless`]). The two eras differ only where the
//! table says so: 2026-07-28 has no `initialize`, `ping` or `logging/setLevel`, adds
//! `server/discover`, and completes every result, marking the lists cacheable.

use serde_json::{Value, json};

use super::{Answer, Session, truncate};
use crate::jsonrpc::{ErrorReply, INVALID_PARAMS, INVALID_REQUEST, Id, METHOD_NOT_FOUND};
use crate::listing;
use crate::logging::Level;
use crate::made::Made;
use crate::protocol::{ClientProfile, ProtocolVersion};
use crate::shared::Shared;
use crate::stateless::{self, Era, RequestMeta};
use crate::tool::VIEW_URI;

/// The scheme of the resources the templates name (`crate::resources`); `ui://` is the view page's.
const URI_SCHEME: &str = "bitbucket://";

/// On whose terms a request is served.
enum Terms {
    /// The session's: its negotiated revision, its client, its log level.
    Session,
    /// Its own (2026-07-28): the client and log level its `_meta` declares; nothing is kept.
    Alone(RequestMeta),
}

impl Session {
    /// Answers a request now, or starts what answers it later.
    pub(super) fn request(
        &mut self,
        id: &Id,
        method: &str,
        params: Value,
        tag: u64,
        batch: Option<u64>,
        sh: &mut Shared,
    ) -> Answer {
        let terms = if method == "server/discover" || (self.version.is_none() && method != "initialize") {
            match stateless::era_of(&params) {
                Era::Stateless(meta) => Terms::Alone(meta),
                Era::Unsupported(requested) => return Answer::Now(Err(stateless::unsupported(id, &requested))),
                // Discovery is how a client learns the revisions; it needs none named.
                Era::Handshake if method == "server/discover" => {
                    Terms::Alone(RequestMeta { client: ClientProfile::default(), log_level: None })
                }
                Era::Handshake => Terms::Session,
            }
        } else {
            Terms::Session
        };
        if matches!(terms, Terms::Session) && self.version.is_none() && !matches!(method, "initialize" | "ping") {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_REQUEST,
                format!("Invalid request: `{method}` before `initialize`; send `initialize` first."),
            )));
        }
        if let Terms::Alone(meta) = &terms {
            self.request_log = meta.log_level.map(|level| (level, tag));
        }
        let answer = self.route(id, method, &params, terms, tag, batch, sh);
        self.request_log = None;
        answer
    }

    /// The table of methods.
    #[allow(clippy::too_many_arguments)]
    fn route(
        &mut self,
        id: &Id,
        method: &str,
        params: &Value,
        terms: Terms,
        tag: u64,
        batch: Option<u64>,
        sh: &mut Shared,
    ) -> Answer {
        let version = sh.config.version;
        let alone = matches!(terms, Terms::Alone(_));
        let err = |code: i64, message: String| Answer::Now(Err(ErrorReply::new(Some(id.clone()), code, message)));
        // A result as its era writes it: on its own, complete, and cacheable for `ttl` when given.
        let done = |v: Value, ttl: Option<u64>| {
            Answer::Now(Ok(match (alone, ttl) {
                (false, _) => v,
                (true, Some(ttl)) => stateless::cacheable(stateless::complete(v, version), ttl),
                (true, None) => stateless::complete(v, version),
            }))
        };
        let no_cursor = matches!(params.get("cursor"), None | Some(Value::Null));
        match (method, terms) {
            ("initialize", Terms::Session) if batch.is_some() => {
                err(INVALID_REQUEST, "Invalid request: `initialize` must not be part of a batch.".into())
            }
            ("initialize", Terms::Session) => self.initialize(id, params, sh),
            ("ping", Terms::Session) => Answer::Now(Ok(json!({}))),
            ("server/discover", Terms::Alone(_)) => {
                let prompts = crate::prompts::any_offered(&sh.config.exposed);
                let watches = sh.config.exposed.kind("pull_request").is_some();
                Answer::Now(Ok(stateless::discover(version, &scoped(sh.made.instructions(), sh), prompts, watches)))
            }
            // The tools only views call are listed to a client that renders views, and to no other.
            ("tools/list", Terms::Alone(meta)) if no_cursor => {
                Answer::Made(Made::StatelessToolsList { apps: meta.client.renders_views })
            }
            ("tools/list", Terms::Session) if no_cursor => {
                Answer::Made(Made::ToolsList { apps: self.client.renders_views })
            }
            ("tools/list", terms) => {
                let (exposed, apps) = match terms {
                    Terms::Alone(meta) => (std::sync::Arc::clone(&sh.config.exposed), meta.client.renders_views),
                    Terms::Session => (self.exposed(sh), self.client.renders_views),
                };
                match listing::page_for(&exposed, sh.config.tools_page_size, params, apps) {
                    Ok(v) => done(v, Some(stateless::LIST_TTL_MS)),
                    Err(m) => err(INVALID_PARAMS, m),
                }
            }
            ("tools/call", Terms::Alone(meta)) => self.tools_call(id, params, Some(meta.client), tag, batch, None, sh),
            ("tools/call", Terms::Session) => self.tools_call(id, params, None, tag, batch, None, sh),
            // The prompts whose tools the request's exposure has, as the templates are.
            ("prompts/list", terms) => {
                let exposed = match terms {
                    Terms::Alone(_) => std::sync::Arc::clone(&sh.config.exposed),
                    Terms::Session => self.exposed(sh),
                };
                done(crate::prompts::list(&exposed), Some(stateless::LIST_TTL_MS))
            }
            ("prompts/get", Terms::Alone(meta)) => self.get_prompt(id, params, Some(meta.client), tag, batch, sh),
            ("prompts/get", Terms::Session) => self.get_prompt(id, params, None, tag, batch, sh),
            ("completion/complete", _) => self.complete(id, params, alone, tag, batch, sh),
            ("resources/list", _) => self.list_resources(id, params, alone, tag, batch, sh),
            // The templates whose tool the request's exposure has: a session's widens with its toolsets.
            ("resources/templates/list", terms) => {
                let exposed = match terms {
                    Terms::Alone(_) => std::sync::Arc::clone(&sh.config.exposed),
                    Terms::Session => self.exposed(sh),
                };
                done(crate::resources::templates(&exposed), Some(stateless::LIST_TTL_MS))
            }
            ("resources/read", terms) => {
                let uri = params.get("uri").and_then(Value::as_str);
                match (uri, terms) {
                    (Some(uri), Terms::Alone(meta)) if uri.starts_with(URI_SCHEME) => {
                        self.read_resource(id, uri, Some(meta.client), tag, batch, sh)
                    }
                    (Some(uri), Terms::Session) if uri.starts_with(URI_SCHEME) => {
                        self.read_resource(id, uri, None, tag, batch, sh)
                    }
                    _ => resources_read(id, params, alone),
                }
            }
            ("logging/setLevel", Terms::Session) => {
                match params.get("level").and_then(Value::as_str).and_then(Level::parse) {
                    Some(level) => {
                        self.client_log_level = Some(level);
                        Answer::Now(Ok(json!({})))
                    }
                    None => err(
                        INVALID_PARAMS,
                        "Invalid params: `level` must be one of debug, info, notice, warning, error, critical, alert, emergency."
                            .into(),
                    ),
                }
            }
            ("ping" | "logging/setLevel", Terms::Alone(_)) => err(
                METHOD_NOT_FOUND,
                format!(
                    "Method not found: `{method}` is not part of 2026-07-28 (set `io.modelcontextprotocol/logLevel` in a request's `_meta` for its log messages)."
                ),
            ),
            ("resources/subscribe", Terms::Session) => self.subscribe(id, params, tag, batch.is_some(), sh),
            ("resources/unsubscribe", Terms::Session) => self.unsubscribe(id, params, sh),
            ("resources/subscribe" | "resources/unsubscribe", Terms::Alone(_)) => err(
                METHOD_NOT_FOUND,
                format!(
                    "Method not found: `{method}` is not part of 2026-07-28; send `subscriptions/listen` with `notifications.resourceSubscriptions`."
                ),
            ),
            ("subscriptions/listen", Terms::Alone(_)) if batch.is_none() => self.listen(id, params, tag, sh),
            (other, _) => err(METHOD_NOT_FOUND, format!("Method not found: `{}`.", truncate(other, 100))),
        }
    }

    fn initialize(&mut self, id: &Id, params: &Value, sh: &mut Shared) -> Answer {
        if self.version.is_some() {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_REQUEST,
                "Invalid request: the session is already initialized.",
            )));
        }
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                "Invalid params: `initialize` needs `protocolVersion`.",
            )));
        };
        let version = ProtocolVersion::negotiate(Some(requested));
        self.version = Some(version);
        // A session may turn groups on while some are off: it sees `enable_toolset`, and bb says its
        // tool list can change.
        self.sees = sh.caches.session_made(&sh.config, self.widened);
        self.client = ClientProfile::from_initialize(params);
        self.log(
            Level::Info,
            format!(
                "session initialized: protocol {}, client {:?} {:?}, renders views: {}",
                version.as_str(),
                truncate(&self.client.name, 100),
                truncate(&self.client.version, 40),
                self.client.renders_views
            ),
            sh,
        );
        Answer::Now(Ok(json!({
            "protocolVersion": version.as_str(),
            "capabilities": stateless::capabilities(
                self.sees.is_some(),
                crate::prompts::any_offered(&self.exposed(sh)),
                self.exposed(sh).kind("pull_request").is_some()
            ),
            "serverInfo": stateless::server_info(sh.config.version),
            "instructions": scoped(self.made(Made::ToolsList { apps: false }, sh).instructions(), sh),
        })))
    }
}

/// The instructions, with the admin's scope said when there is one: the model then names those
/// repositories rather than learn the bound from a refusal.
fn scoped(instructions: &str, sh: &Shared) -> String {
    match &sh.config.scope {
        Some(scope) => format!(
            "{instructions}\n\nThis bb works only in {}: a call naming any other repository is refused, and lists and \
             searches are narrowed to it.",
            scope.words()
        ),
        None => instructions.to_owned(),
    }
}

/// Reads the view page (a `bitbucket://` URI is read by its tool, `session/read.rs`); `alone` answers as 2026-07-28 does (complete and cacheable, and an unknown
/// URI is invalid params rather than -32002).
fn resources_read(id: &Id, params: &Value, alone: bool) -> Answer {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return Answer::Now(Err(ErrorReply::new(
            Some(id.clone()),
            INVALID_PARAMS,
            "Invalid params: `resources/read` needs a `uri`.",
        )));
    };
    if uri != VIEW_URI {
        return Answer::Now(Err(super::read::not_found(id, uri, alone, ".")));
    }
    Answer::Made(if alone { Made::StatelessView } else { Made::View })
}
