//! The cross-checks of a benchmark config: a secret the platform injects under its own name must not
//! also be an agent's literal variable, the runner's reserved names stay free, and each harness gets the
//! key variable it reads.

use super::super::schema::AGENTS;
use super::super::Checker;
use std::ops::Range;

/// Names the benchmark runner removes from an agent's environment before it sets the model key.
const RESERVED_MODEL_SECRETS: [&str; 4] = [
    "DAYTONA_API_KEY",
    "DAYTONA_API_URL",
    "SKYPILOT_SERVICE_ACCOUNT_TOKEN",
    "SKYPILOT_API_SERVER_ENDPOINT",
];
/// Harnesses that read their own key from a fixed variable (given as `harness_api_key_secret`).
const HARNESS_KEYS: [(&str, &str); 1] = [("cursor-cli", "CURSOR_API_KEY")];
/// mini-swe-agent receives a provider or endpoint model's key under this name.
const MINI_SWE_AGENT_KEY: &str = "MSWEA_API_KEY";

/// What the cross-checks need of one agent, with the spans to point at.
pub(super) struct Agent {
    pub(super) harness: Option<String>,
    pub(super) harness_secret: Option<(String, Range<usize>)>,
    pub(super) model_type: Option<String>,
    pub(super) model_secret: Option<(String, Range<usize>)>,
    pub(super) env: Vec<String>,
    pub(super) span: Range<usize>,
}

/// Secrets the platform injects under their own names cannot also be an agent's literal variables.
pub(super) fn check_collisions(
    checker: &mut Checker<'_>,
    agents: &[Agent],
    global_env: &[String],
    judge: Option<(String, Range<usize>)>,
    verifier: &[String],
) {
    for (i, agent) in agents.iter().enumerate() {
        let key = format!("{AGENTS}[{i}]");
        let env = |name: &str| agent.env.iter().chain(global_env).any(|n| n == name);
        let hosted = agent.model_type.as_deref() == Some("hosted");
        if let Some((secret, span)) = &agent.model_secret {
            if RESERVED_MODEL_SECRETS.contains(&secret.as_str()) {
                let message = format!("'{secret}' is reserved by the benchmark runner; store the model key under another secret name");
                checker.report(
                    span.clone(),
                    &format!("{key}.model.api_key_secret"),
                    message,
                );
            } else if env(secret) {
                let message = format!("'{secret}' is also set in [env] or this agent's [agents.env]; the platform injects the secret under that name, so remove the variable or rename the secret");
                checker.report(
                    span.clone(),
                    &format!("{key}.model.api_key_secret"),
                    message,
                );
            }
        }
        let injected = judge
            .iter()
            .map(|(n, s)| (n.clone(), s.clone(), "execution.judge_api_key_secret"));
        for (name, span, what) in injected {
            if env(&name) {
                checker.report(span, what, format!("'{name}' is also set in agent {i}'s environment; remove the variable or rename the secret"));
            }
        }
        for name in verifier.iter().filter(|n| env(n)) {
            checker.report(agent.span.clone(), &key, format!("'{name}' of [verifier].required is also set in this agent's environment; remove the variable"));
        }
        check_harness(checker, &key, agent, &env, hosted);
    }
}

fn check_harness(
    checker: &mut Checker<'_>,
    key: &str,
    agent: &Agent,
    env: &dyn Fn(&str) -> bool,
    hosted: bool,
) {
    let harness = agent.harness.as_deref().unwrap_or("");
    let wanted = HARNESS_KEYS
        .iter()
        .find(|(h, _)| *h == harness)
        .map(|(_, v)| *v);
    let dotted = format!("{key}.harness_api_key_secret");
    match (wanted, &agent.harness_secret) {
        (Some(var), _) if env(var) => {
            checker.report(
                agent.span.clone(),
                key,
                format!(
                    "'{var}' is managed by the {harness} harness; remove it from the environment"
                ),
            );
        }
        (Some(var), None) => {
            checker.report(agent.span.clone(), &dotted, format!("the {harness} harness needs harness_api_key_secret = \"{var}\" (a platform secret holding its key)"));
        }
        (Some(var), Some((name, span))) if name != var => {
            checker.report(span.clone(), &dotted, format!("the {harness} harness reads {var}: store the key in a secret named {var} and reference that name"));
        }
        (None, Some((_, span))) => {
            let who = if harness.is_empty() {
                "the default scaffold".to_string()
            } else {
                format!("the {harness} harness")
            };
            checker.report(
                span.clone(),
                &dotted,
                format!("{who} takes no harness_api_key_secret; remove it"),
            );
        }
        _ => {}
    }
    if harness == "mini-swe-agent" && !hosted && env(MINI_SWE_AGENT_KEY) {
        checker.report(agent.span.clone(), key, format!("'{MINI_SWE_AGENT_KEY}' is set by the platform for mini-swe-agent (the model's key); remove the variable"));
    }
}
