// A team made by a split borrows the World too.
use shmem_core::prelude::*;

fn main() {
    let team = {
        let world = shmem_core::init().unwrap();
        world
            .team_world()
            .split_strided(0, 1, 1, TeamConfig::default())
    };
    drop(team);
}
