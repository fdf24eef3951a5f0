package command

// The pubsub group. Subscriptions live in the server (PubSub): they belong to
// connections, not to the dataset.

// Subscription kinds, as pubsub.Kind.
const (
	SubChannel = 0
	SubPattern = 1
	SubShard   = 2
)

// PubSubHub is the server's Pub/Sub registry as commands use it. Calls happen
// under the engine's serialisation point.
type PubSubHub interface {
	// Subscribe subscribes the client to names and appends one confirmation
	// per name; Unsubscribe does the reverse (every subscription of the kind
	// when names is empty).
	Subscribe(c *Ctx, kind int, names [][]byte)
	Unsubscribe(c *Ctx, kind int, names [][]byte)
	// Publish delivers msg and returns the number of receivers.
	Publish(kind int, channel, msg []byte) int
	// Channels lists the channels (kind SubChannel or SubShard) with
	// subscribers matching pattern (all when pattern is nil).
	Channels(kind int, pattern []byte) []string
	// NumSub is the subscriber count of a channel; NumPat the number of
	// patterns subscribed to.
	NumSub(kind int, name []byte) int
	NumPat() int
	// UnsubscribeAll drops every subscription of the client, without replies.
	UnsubscribeAll(c *Ctx)
}

func pubsubCommands() []*Spec {
	const ps = PubSub | Loading | Stale
	shardKeys := []KeySpec{{Flags: "not_key", Begin: 1, Last: -1, Step: 1}}
	return []*Spec{
		{Name: "psubscribe", Arity: -2, Flags: ps | DenyOOM | NoScript | PushReply | SubscribedOK, Run: psubscribeCmd},
		{Name: "publish", Arity: 3, Flags: ps | Fast | MayReplicate, Run: publishCmd},
		{Name: "pubsub", Arity: -2, Subs: []*Spec{
			{Name: "channels", Arity: -2, Flags: ps, Run: pubsubChannels},
			{Name: "help", Arity: 2, Flags: Loading | Stale, Run: pubsubHelp},
			{Name: "numpat", Arity: 2, Flags: ps, Run: pubsubNumpat},
			{Name: "numsub", Arity: -2, Flags: ps, Run: pubsubNumsub},
			{Name: "shardchannels", Arity: -2, Flags: ps, Run: pubsubShardChannels},
			{Name: "shardnumsub", Arity: -2, Flags: ps, Run: pubsubShardNumsub},
		}},
		{Name: "punsubscribe", Arity: -1, Flags: ps | NoScript | PushReply | SubscribedOK, Run: punsubscribeCmd},
		{Name: "spublish", Arity: 3, Flags: ps | Fast | MayReplicate, FirstKey: 1, LastKey: 1, Step: 1, Keys: []KeySpec{{Flags: "not_key", Begin: 1, Step: 1}}, Run: spublishCmd},
		{Name: "ssubscribe", Arity: -2, Flags: ps | DenyOOM | NoScript | PushReply | SubscribedOK, FirstKey: 1, LastKey: -1, Step: 1, Keys: shardKeys, Run: ssubscribeCmd},
		{Name: "subscribe", Arity: -2, Flags: ps | DenyOOM | NoScript | PushReply | SubscribedOK, Run: subscribeCmd},
		{Name: "sunsubscribe", Arity: -1, Flags: ps | NoScript | PushReply | SubscribedOK, FirstKey: 1, LastKey: -1, Step: 1, Keys: shardKeys, Run: sunsubscribeCmd},
		{Name: "unsubscribe", Arity: -1, Flags: ps | NoScript | PushReply | SubscribedOK, Run: unsubscribeCmd},
	}
}

func subscribeCmd(c *Ctx)    { c.Srv.PubSub().Subscribe(c, SubChannel, c.Argv[1:]) }
func psubscribeCmd(c *Ctx)   { c.Srv.PubSub().Subscribe(c, SubPattern, c.Argv[1:]) }
func ssubscribeCmd(c *Ctx)   { c.Srv.PubSub().Subscribe(c, SubShard, c.Argv[1:]) }
func unsubscribeCmd(c *Ctx)  { c.Srv.PubSub().Unsubscribe(c, SubChannel, c.Argv[1:]) }
func punsubscribeCmd(c *Ctx) { c.Srv.PubSub().Unsubscribe(c, SubPattern, c.Argv[1:]) }
func sunsubscribeCmd(c *Ctx) { c.Srv.PubSub().Unsubscribe(c, SubShard, c.Argv[1:]) }

// publishCmd: replicas get every PUBLISH (forceCommandPropagation with
// PROPAGATE_REPL: their own subscribers hear it too); the AOF does not.
func publishCmd(c *Ctx) {
	c.W.Int(int64(c.Srv.PubSub().Publish(SubChannel, c.Argv[1], c.Argv[2])))
	c.ForcePropagation(PropRepl)
}

func spublishCmd(c *Ctx) {
	c.W.Int(int64(c.Srv.PubSub().Publish(SubShard, c.Argv[1], c.Argv[2])))
	c.ForcePropagation(PropRepl)
}

func pubsubChannelsGeneric(c *Ctx, kind int) {
	if len(c.Argv) > 3 {
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + truncArg(c.Argv[1]) + "'. Try PUBSUB HELP.")
		return
	}
	var pattern []byte
	if len(c.Argv) == 3 {
		pattern = c.Argv[2]
	}
	names := c.Srv.PubSub().Channels(kind, pattern)
	c.W.ArrayLen(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

func pubsubChannels(c *Ctx)      { pubsubChannelsGeneric(c, SubChannel) }
func pubsubShardChannels(c *Ctx) { pubsubChannelsGeneric(c, SubShard) }

// NUMSUB replies a flat array of channel, count pairs, in RESP3 too (as
// Redis's pubsubCommand: a map made redis-py raise and node-redis return {}).
func pubsubNumsubGeneric(c *Ctx, kind int) {
	names := c.Argv[2:]
	c.W.ArrayLen(2 * len(names))
	for _, n := range names {
		c.W.Bulk(n)
		c.W.Int(int64(c.Srv.PubSub().NumSub(kind, n)))
	}
}

func pubsubNumsub(c *Ctx)      { pubsubNumsubGeneric(c, SubChannel) }
func pubsubShardNumsub(c *Ctx) { pubsubNumsubGeneric(c, SubShard) }
func pubsubNumpat(c *Ctx)      { c.W.Int(int64(c.Srv.PubSub().NumPat())) }

func pubsubHelp(c *Ctx) {
	writeHelp(c, "PUBSUB",
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	)
}
