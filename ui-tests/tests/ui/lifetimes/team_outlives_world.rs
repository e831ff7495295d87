// Teams borrow the World: a team cannot be used after the World is dropped (finalized).
fn main() {
    let world = shmem_core::init().unwrap();
    let team = world.team_world();
    drop(world);
    team.sync();
}
