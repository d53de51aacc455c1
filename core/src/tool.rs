//! What every tool and view kind is made of, and what a call sees: the leaf that tools, views, the
//! catalogue and the session all use, and that uses none of them.

use serde_json::{Map, Value, json};

use crate::plan::Step;
use crate::protocol::ClientProfile;
pub use crate::scope::{Scope, Scoped};
pub use crate::toolsets::Toolset;
use crate::toolsets::Toolsets;

/// The URI of bb's one view page.
pub const VIEW_URI: &str = "ui://bb/view";

/// The key of a view's data in a result's `_meta` (`crate::views::META_KEY`): what a watch reads its
/// fingerprint and `next` from, as a view does.
pub const VIEW_META_KEY: &str = "bb/view";

/// What part a tool plays in the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A tool that answers the model, in its group; the kinds table says which view kind (if any) draws its answer.
    Data(Toolset),
    /// The one view tool; which kinds it offers follows from the kinds table and the exposed tools.
    Show,
    /// A tool only views call (`refresh_view`, `suggest_form_values`); goes with `show`, and with
    /// `kind` named, only while that kind is offered (the form's suggestions serve the form alone).
    ViewCompanion {
        /// The one kind it serves, if it serves one.
        kind: Option<&'static str>,
    },
    /// A tool that acts on the session itself, which answers it rather than a plan (`enable_toolset`).
    Session,
}

impl Role {
    /// Whether only views call the tool (MCP Apps' `visibility: ["app"]`): a client that renders no
    /// views neither sees it listed nor may call it.
    pub fn app_only(self) -> bool {
        matches!(self, Role::ViewCompanion { .. })
    }
}

/// Whether a tool changes anything in Bitbucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only.
    Read,
    /// Writes something a person can undo or that adds (a comment, a review).
    Write,
    /// Writes something that cannot be taken back (a merge): exposed only when asked for.
    UnsafeWrite,
}

/// MCP tool annotations: all four hints, each decided by what the tool does, and every one stated in
/// `tools/list` (MCP schema `ToolAnnotations`, 2025-03-26 and later). Hosts give a model a tool's name,
/// description and input schema; the hints and the title are for the host (whether to ask the person
/// first, what to call the tool), so stating them costs the person's screen, not the model's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    /// The tool does not modify its environment.
    pub read_only: bool,
    /// The tool may perform destructive updates.
    pub destructive: bool,
    /// Calling it again with the same arguments has no additional effect.
    pub idempotent: bool,
    /// The tool reaches an open world (Bitbucket): true for every tool that reads Bitbucket.
    pub open_world: bool,
}

impl Annotations {
    /// What MCP assumes of a hint left out (schema `ToolAnnotations`, 2025-03-26 and later: readOnlyHint false,
    /// destructiveHint true, idempotentHint false, openWorldHint true): what a tool that says nothing is taken for.
    pub const DEFAULT: Annotations =
        Annotations { read_only: false, destructive: true, idempotent: false, open_world: true };
    /// Reads Bitbucket; calling again changes nothing.
    pub const READ: Annotations =
        Annotations { read_only: true, destructive: false, idempotent: true, open_world: true };
    /// Adds something (a comment, a pull request): not idempotent, not destructive.
    pub const ADD: Annotations =
        Annotations { read_only: false, destructive: false, idempotent: false, open_world: true };
    /// Cannot be taken back (a merge).
    pub const IRREVERSIBLE: Annotations =
        Annotations { read_only: false, destructive: true, idempotent: false, open_world: true };

    /// The four hints as `tools/list` carries them, every one stated: a host shows or acts on what it is
    /// given, and one that reads a missing hint as MCP's default takes a read for a destructive write.
    pub fn listed(self) -> Value {
        json!({
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        })
    }
}

/// Whether a tool asks the person before it runs: every tool says, beside its definition, so a new
/// tool must choose. A tool asks when it merges or decides whether or when a pull request merges,
/// feeds a check that decides it, or cannot be undone (issue 51; the decision record's own system
/// asks for the same). The admin's `--confirm off` turns asking off for every tool.
#[derive(Debug, Clone, Copy)]
pub enum Asks {
    /// Never asks.
    Never,
    /// Always asks; `untouched` says what stays as it was when the person says no ("nothing was merged").
    Always {
        /// What stays as it was when nothing is written.
        untouched: &'static str,
    },
    /// Asks when its arguments say so (`submit_pr_review` approving or saying Needs work,
    /// `update_pull_request` changing the draft flag).
    When {
        /// Whether a call with these (checked) arguments asks.
        applies: fn(&Map<String, Value>) -> bool,
        /// When, in words, for `bb ai mcp tools` and the README.
        case: &'static str,
        /// What stays as it was when nothing is written.
        untouched: &'static str,
    },
}

impl Asks {
    /// Whether a call with `args` asks.
    pub fn applies(self, args: &Map<String, Value>) -> bool {
        match self {
            Asks::Never => false,
            Asks::Always { .. } => true,
            Asks::When { applies, .. } => applies(args),
        }
    }

    /// When the tool asks, in words (`bb ai mcp tools`, the README): "never", "always" or the case.
    pub fn words(self) -> &'static str {
        match self {
            Asks::Never => "never",
            Asks::Always { .. } => "always",
            Asks::When { case, .. } => case,
        }
    }

    /// What stays as it was when the person does not confirm ("nothing was merged").
    pub fn untouched(self) -> &'static str {
        match self {
            Asks::Never => "nothing was changed",
            Asks::Always { untouched } | Asks::When { untouched, .. } => untouched,
        }
    }
}

/// What a call sees of its session and server, at the time it starts.
#[derive(Debug)]
pub struct Call<'a> {
    /// The client, as it declared itself in `initialize`.
    pub client: &'a ClientProfile,
    /// What this server exposes.
    pub exposed: &'a Exposed,
    /// Wall-clock time of the call, epoch milliseconds.
    pub now_ms: u64,
    /// The Bitbucket user's slug, once a response has named it (`X-AUSERNAME`).
    pub bitbucket_user: Option<&'a str>,
    /// Bitbucket's base URL, for the links views build.
    pub base_url: Option<&'a str>,
    /// Whether the operator allows lexers that embed other languages (`--highlight-templates`).
    pub highlight_templates: bool,
    /// Where the call stands with the person: nobody asked, ask first, or confirmed with a pin.
    pub confirming: crate::confirm::Confirming<'a>,
    /// Where on its cadence's grid a view of this call asks to be refreshed (`views/refresh.rs`
    /// `on_grid_at`): 0 for bb's own credentials, else a stable hash of the person.
    pub spread: u64,
    /// Whether this server asks the person before the tools that ask run (`--confirm`, on by default):
    /// a view names those tools, so it says "Waiting for your confirmation" only beside them.
    pub asks: bool,
    /// The admin's scope, when one is set: the tools that narrow ([`Scoped::Narrowed`]) filter their
    /// answer to it (the session already refused a call naming a repository outside it).
    pub scope: Option<&'a Scope>,
}

/// Where on the grid the views of these credentials ask: 0 for bb's own (`None`), else a stable hash of
/// the person (the same on every replica, so one person's views align wherever they are served).
pub(crate) fn spread_of(principal: Option<&str>) -> u64 {
    principal.map_or(0, |p| {
        p.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    })
}

/// Starts a call with arguments already checked against the tool's schema.
pub type StartFn = fn(&Map<String, Value>, &Call<'_>) -> Step;

/// One tool bb has.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// The tool's name (snake_case).
    pub name: &'static str,
    /// A human title, as `tools/list` carries it (MCP `BaseMetadata.title`, 2025-06-18 and later: what a host
    /// shows in place of the name).
    pub title: &'static str,
    /// What the model reads to decide whether to call it.
    pub description: &'static str,
    /// The input schema; `show`'s is built from the kinds it offers instead.
    pub input_schema: fn() -> Value,
    /// MCP's four hints about its effects, each decided for the tool (`core/tests/tool_hints.rs` holds them
    /// to a table with the reason).
    pub annotations: Annotations,
    /// Whether it writes.
    pub access: Access,
    /// Whether it asks the person before it runs (no default: a new tool must choose).
    pub asks: Asks,
    /// How the admin's scope (`--project`, `--repo`) holds it (no default: a new tool must choose).
    pub scope: Scoped,
    /// Data tool, `show`, or a tool only views call: `show`'s schema and a companion's exposure follow from it.
    pub role: Role,
    /// Runs a call.
    pub start: StartFn,
}

/// One kind of `show`: a view of the answer of one data tool.
#[derive(Debug, Clone, Copy)]
pub struct KindSpec {
    /// The kind's name, as `show`'s `kind` argument and the view data's `kind`.
    pub name: &'static str,
    /// The data tool whose answer it shows and whose arguments it takes; the kind is offered only
    /// while that tool is exposed.
    pub tool: &'static str,
    /// Builds the view.
    pub start: StartFn,
    /// The page's script that draws it (in `assets/view/`).
    pub page: &'static str,
    /// What `show`'s description says it is, after its name ("its page"); kinds side by side in the table
    /// with the same words are named together ("diff or compare (…)").
    pub words: &'static str,
    /// How its arguments differ from its data tool's (a draft's fewer required, an argument only the view
    /// takes), when they do.
    pub args: Option<fn(&mut Value)>,
    /// What its refresh cadence follows in its view data.
    pub pace: Pace,
}

/// What a view's refresh cadence follows, read from its data (the refresh reads each as its kind's row
/// says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// A pull request (`pullRequest`): its builds, its merge check being computed, its activity, closed.
    PullRequest,
    /// A list of pull requests (`list`): builds in progress, the newest update.
    List,
    /// A diff (`diff`): a pull request's (closed, its updates and comments) or two refs' (settled).
    Diff,
    /// A pull request's comment threads (`threads`): its updates and comments, closed.
    Threads,
    /// Nothing it draws moves of itself (a draft form, a file at a ref): the quiet steps alone.
    Still,
}

/// The tools a server exposes and the kinds `show` offers.
///
/// Their `tools/list` entries are made when asked for ([`Exposed::listed`]), not held: a server serializes
/// them once into the answers it keeps (`shared::MadeOnce`), so holding them as values as well would keep
/// about 260 KB of maps and strings on the heap of every idle process for nothing.
#[derive(Debug)]
pub struct Exposed {
    tools: Vec<ToolSpec>,
    kinds: Vec<KindSpec>,
    /// The groups `enable_toolset` offers (those off, which a session may turn on).
    offerable: Toolsets,
    /// What a session sees, from the groups it turned on: present while a session may turn one on.
    pub(crate) widen: Option<Widen>,
    /// Each tool's input schema as calls are checked against it, made at its first call (a schema
    /// built per call cost a `show` a fifth of its CPU), in `tools` order.
    schemas: Vec<std::sync::OnceLock<Value>>,
    /// On a read-only server (`--read-only`), the tools bb has that change Bitbucket, all withheld: a
    /// call to one is refused in those words, not as an unknown tool.
    pub(crate) read_only: Option<Vec<&'static str>>,
    /// The tools that cannot be undone that bb has and this exposure withholds for want of `--allow-writes`
    /// (the write gate): a call to one is refused, and recorded as such.
    pub(crate) gated: Vec<&'static str>,
}

/// Makes the exposure of a session that turned groups on (the catalogue's, with the operator's options).
#[derive(Clone)]
pub(crate) struct Widen(std::sync::Arc<dyn Fn(Toolsets) -> Exposed + Send + Sync>);

impl Widen {
    pub(crate) fn new(f: impl Fn(Toolsets) -> Exposed + Send + Sync + 'static) -> Widen {
        Widen(std::sync::Arc::new(f))
    }

    /// What a session that turned `extra` on sees.
    pub(crate) fn exposure(&self, extra: Toolsets) -> Exposed {
        (self.0)(extra)
    }
}

impl std::fmt::Debug for Widen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Widen")
    }
}

impl Exposed {
    /// Exposes `tools`, with `kinds` offered by `show` (each kind's tool among `tools`).
    pub fn new(tools: Vec<ToolSpec>, kinds: Vec<KindSpec>) -> Exposed {
        Exposed::offering(tools, kinds, Toolsets::NONE)
    }

    /// Exposes `tools` and `kinds`, with `enable_toolset` (if among `tools`) offering `offerable`.
    pub(crate) fn offering(tools: Vec<ToolSpec>, kinds: Vec<KindSpec>, offerable: Toolsets) -> Exposed {
        let schemas = tools.iter().map(|_| std::sync::OnceLock::new()).collect();
        Exposed { tools, kinds, offerable, widen: None, schemas, read_only: None, gated: Vec::new() }
    }

    /// Whether the server is read-only (`--read-only`).
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    /// Whether `name` is a tool that changes Bitbucket, withheld because the server is read-only.
    pub fn withheld_as_write(&self, name: &str) -> bool {
        self.read_only.as_ref().is_some_and(|w| w.contains(&name))
    }

    /// Whether `name` is a tool that cannot be undone, withheld by the write gate (no `--allow-writes`).
    pub fn gated(&self, name: &str) -> bool {
        self.gated.contains(&name)
    }

    /// The groups a session may still turn on.
    pub fn offerable(&self) -> Toolsets {
        self.offerable
    }

    /// What a session that turned the groups of `extra` on sees, when a session may turn groups on.
    pub fn session_sees(&self, extra: Toolsets) -> Option<Exposed> {
        self.widen.as_ref().map(|w| w.exposure(extra))
    }

    /// The exposed tools, in `tools/list` order.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The exposed tool with this name.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The `tools/list` entries, made now.
    pub fn listed(&self) -> Vec<Value> {
        self.tools.iter().map(|t| self.render(t)).collect()
    }

    /// The `tools/list` entries a client sees, made now: without the tools only views call
    /// (`_meta.ui.visibility: ["app"]`) unless it declared it renders MCP Apps views (`apps`).
    pub fn listed_for(&self, apps: bool) -> Vec<Value> {
        self.tools.iter().filter(|t| apps || !t.role.app_only()).map(|t| self.render(t)).collect()
    }

    /// The exposed tool with this name that a client sees: as [`Exposed::get`], but a tool only views
    /// call is not one for a client that does not render them (`apps` false).
    pub fn get_for(&self, name: &str, apps: bool) -> Option<&ToolSpec> {
        self.get(name).filter(|t| apps || !t.role.app_only())
    }

    /// The kinds `show` offers, in table order.
    pub fn kinds(&self) -> &[KindSpec] {
        &self.kinds
    }

    /// The offered kind with this name.
    pub fn kind(&self, name: &str) -> Option<&KindSpec> {
        self.kinds.iter().find(|k| k.name == name)
    }

    /// The input schema a call to `tool` (one of these tools) is checked against, made once.
    pub fn checked_schema(&self, tool: &ToolSpec) -> std::borrow::Cow<'_, Value> {
        match self.tools.iter().position(|t| t.name == tool.name) {
            Some(i) => std::borrow::Cow::Borrowed(self.schemas[i].get_or_init(|| self.input_schema(tool))),
            None => std::borrow::Cow::Owned(self.input_schema(tool)),
        }
    }

    /// The input schema a call to `tool` is checked against.
    pub fn input_schema(&self, tool: &ToolSpec) -> Value {
        match tool.role {
            Role::Show => self.show_schema(),
            Role::Session => self.toolset_schema(),
            _ => (tool.input_schema)(),
        }
    }

    /// The schema of a `show` call: `kind`, and the arguments of the kind's data tool, which the
    /// model already has from that tool's own schema (so they are not listed twice, at a cost in
    /// tokens on every `tools/list`). `show` checks them against that schema when it runs.
    fn show_schema(&self) -> Value {
        let kinds: Vec<&str> = self.kinds.iter().map(|k| k.name).collect();
        let pairs: Vec<String> = self.kinds.iter().map(|k| format!("{}: {}", k.name, k.tool)).collect();
        json!({"type": "object",
               "properties": {"kind": {"type": "string", "enum": kinds,
                   "description": format!("The view. Also pass the arguments of its tool ({}).", pairs.join(", "))}},
               "required": ["kind"]})
    }

    /// The schema of an `enable_toolset` call: one of the groups still off.
    fn toolset_schema(&self) -> Value {
        let names: Vec<&str> = self.offerable.groups().map(Toolset::name).collect();
        json!({"type": "object",
               "properties": {"toolset": {"type": "string", "enum": names}},
               "required": ["toolset"], "additionalProperties": false})
    }

    /// One `tools/list` entry.
    fn render(&self, t: &ToolSpec) -> Value {
        let mut entry = Map::new();
        entry.insert("name".into(), Value::from(t.name));
        entry.insert("title".into(), Value::from(t.title));
        entry.insert("description".into(), Value::from(t.description));
        entry.insert("inputSchema".into(), self.input_schema(t));
        entry.insert("annotations".into(), t.annotations.listed());
        match t.role {
            Role::Show => {
                entry.insert("_meta".into(), json!({"ui": {"resourceUri": VIEW_URI}, "ui/resourceUri": VIEW_URI}));
            }
            Role::ViewCompanion { .. } => {
                entry.insert("_meta".into(), json!({"ui": {"visibility": ["app"]}}));
            }
            Role::Data(_) | Role::Session => {}
        }
        Value::Object(entry)
    }
}
