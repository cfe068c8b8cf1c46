//! What the Slack adapter remembers between messages, each bounded: the workspaces (`auth.test`
//! of each bot token: its team and bot user), which workspace a channel belongs to (so a reply
//! goes out with that workspace's token), the threads the bot posted in or was mentioned in (a
//! reply there is for it without a mention, as in Hermes), and users' display names.

use std::collections::{HashMap, HashSet, VecDeque};

/// Threads, channels and names kept (Hermes keeps 5,000 threads).
const MAX_THREADS: usize = 5000;
const MAX_CHANNELS: usize = 10_000;
const MAX_NAMES: usize = 10_000;

/// One workspace the app is installed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    pub team: String,
    /// Its bot token; never printed.
    pub token: String,
    pub bot_user: String,
}

/// A set that forgets its oldest entries past a bound.
#[derive(Debug, Default)]
struct Bounded<T: std::hash::Hash + Eq + Clone> {
    set: HashSet<T>,
    order: VecDeque<T>,
}

impl<T: std::hash::Hash + Eq + Clone> Bounded<T> {
    fn insert(&mut self, value: T, max: usize) {
        if self.set.insert(value.clone()) {
            self.order.push_back(value);
            while self.order.len() > max {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }

    fn contains(&self, value: &T) -> bool {
        self.set.contains(value)
    }
}

/// The adapter's memory.
#[derive(Debug, Default)]
pub struct Memory {
    /// In `SLACK_BOT_TOKEN`'s order; the first is the primary.
    pub workspaces: Vec<Workspace>,
    channels: HashMap<String, String>,
    threads: Bounded<(String, String)>,
    names: HashMap<(String, String), String>,
}

impl Memory {
    /// The workspace `team`, or the primary when it is unknown.
    pub fn workspace(&self, team: &str) -> Option<&Workspace> {
        self.workspaces
            .iter()
            .find(|w| w.team == team)
            .or_else(|| self.workspaces.first())
    }

    /// The workspace `channel` was last heard in, if known.
    pub fn team_of(&self, channel: &str) -> Option<&str> {
        self.channels.get(channel).map(String::as_str)
    }

    pub fn note_channel(&mut self, channel: &str, team: &str) {
        if team.is_empty() || self.channels.get(channel).is_some_and(|t| t == team) {
            return;
        }
        if self.channels.len() >= MAX_CHANNELS {
            self.channels.clear();
        }
        self.channels.insert(channel.to_string(), team.to_string());
    }

    pub fn note_thread(&mut self, channel: &str, thread: &str) {
        if !thread.is_empty() {
            self.threads
                .insert((channel.to_string(), thread.to_string()), MAX_THREADS);
        }
    }

    pub fn bot_thread(&self, channel: &str, thread: &str) -> bool {
        self.threads
            .contains(&(channel.to_string(), thread.to_string()))
    }

    pub fn name(&self, team: &str, user: &str) -> Option<String> {
        self.names
            .get(&(team.to_string(), user.to_string()))
            .cloned()
    }

    pub fn note_name(&mut self, team: &str, user: &str, name: &str) {
        if self.names.len() >= MAX_NAMES {
            self.names.clear();
        }
        self.names
            .insert((team.to_string(), user.to_string()), name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_bounded_oldest_first_and_workspaces_fall_back_to_the_primary() {
        let mut memory = Memory::default();
        for i in 0..MAX_THREADS + 1 {
            memory.note_thread("C1", &i.to_string());
        }
        assert!(!memory.bot_thread("C1", "0"));
        assert!(memory.bot_thread("C1", &MAX_THREADS.to_string()));
        memory.workspaces = vec![
            Workspace {
                team: "T1".into(),
                token: "a".into(),
                bot_user: "U1".into(),
            },
            Workspace {
                team: "T2".into(),
                token: "b".into(),
                bot_user: "U2".into(),
            },
        ];
        assert_eq!(memory.workspace("T2").map(|w| w.token.as_str()), Some("b"));
        assert_eq!(memory.workspace("T9").map(|w| w.token.as_str()), Some("a"));
        memory.note_channel("C5", "T2");
        assert_eq!(memory.team_of("C5"), Some("T2"));
    }
}
