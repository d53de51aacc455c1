//! The stack's whole state: the model, what the control API set, and the seed to reset to.

use crate::admission::Control;
use crate::model::Model;
use crate::render::View;
use crate::seed::{self, Seed};

/// Everything a request may read or change.
#[derive(Debug, Clone)]
pub struct World {
    /// The seed the model came from (reset goes back to it).
    pub seed: Seed,
    /// The token given on the command line for the default user.
    pub token: Option<String>,
    /// The data served now: built from `seed`, changed by writes, built again by a reset.
    pub model: Model,
    /// Faults, latency, the rate limit, request counts and the request log, through `/_stack`. A running stack keeps
    /// them beside the world under a lock of their own (so a read is counted without holding the world alone) and
    /// puts them here while a `/_stack` request or a test holds the whole world (`server::Shared::whole`).
    pub control: Control,
    /// Base URL (scheme, host, port and context path), known once the socket is bound.
    pub base_url: String,
    /// Context path such as `/bitbucket`, or empty.
    pub context_path: String,
    /// Code search starts (and resets) switched off (`--no-search`).
    pub no_search: bool,
    /// Milliseconds added to every Bitbucket answer from the start (`STACK_LATENCY_MS`), and again after a reset:
    /// the baseline, as if `/_stack/latency` had been posted `{"millis": ms}` (path prefix `/`). 0 for none.
    pub base_latency_ms: u64,
}

impl World {
    /// A world built from seed text; `token` replaces the default user's token.
    pub fn from_seed_text(text: &str, token: Option<&str>) -> Result<World, String> {
        let seed = seed::parse(text)?;
        let model = seed::build(&seed, token)?;
        Ok(World {
            seed,
            token: token.map(str::to_string),
            model,
            control: Control::default(),
            base_url: "http://127.0.0.1".into(),
            context_path: String::new(),
            no_search: false,
            base_latency_ms: 0,
        })
    }

    /// A world built from the committed seed.
    pub fn from_default_seed() -> Result<World, String> {
        World::from_seed_text(seed::DEFAULT_SEED, None)
    }

    /// Back to the seed: data, faults, latency (to the baseline, [`World::base_latency_ms`]), the rate limit (off),
    /// counters and the request log alike.
    pub fn reset(&mut self) -> Result<(), String> {
        self.model = seed::build(&self.seed, self.token.as_deref())?;
        self.model.search_off = self.no_search;
        self.control = self.fresh_control();
        Ok(())
    }

    /// What the control API holds at the start and after a reset: nothing set but the baseline latency.
    pub fn fresh_control(&self) -> Control {
        let mut control = Control::default();
        if self.base_latency_ms > 0 {
            control.latency.insert("/".into(), self.base_latency_ms);
        }
        control
    }

    /// The rendering context for a request, before it is known who asks (`viewer` none).
    pub fn view(&self, avatar_size: Option<u32>) -> View {
        View { base_url: self.base_url.clone(), avatar_size, context_path: self.context_path.clone(), viewer: None }
    }

    /// The default user's personal access token.
    pub fn default_token(&self) -> String {
        self.model.users.get(&self.model.default_user).map(|u| u.token.clone()).unwrap_or_default()
    }
}
