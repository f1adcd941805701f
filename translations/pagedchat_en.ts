<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en" sourcelanguage="en">
<context>
    <name>AppController</name>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
</context>
<context>
    <name>AppOptions</name>
    <message>
        <source>Chat with a local language model.</source>
        <translation>Chat with a local language model.</translation>
    </message>
    <message>
        <source>Model file or folder (default: $PAGEDCHAT_MODEL, else %1).</source>
        <translation>Model file or folder (default: $PAGEDCHAT_MODEL, else %1).</translation>
    </message>
    <message>
        <source>Sentencepiece tokenizer model (default: beside the model).</source>
        <translation>Sentencepiece tokenizer model (default: beside the model).</translation>
    </message>
    <message>
        <source>Folder for the chat database (default: %1).</source>
        <translation>Folder for the chat database (default: %1).</translation>
    </message>
    <message>
        <source>Chat template: auto (from the model files), llama-2, chatml, zephyr, mistral, vicuna or none.</source>
        <translation>Chat template: auto (from the model files), llama-2, chatml, zephyr, mistral, vicuna or none.</translation>
    </message>
</context>
<context>
    <name>AppToolBar</name>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>Main tool bar</source>
        <translation>Main tool bar</translation>
    </message>
    <message>
        <source>Hide the conversation list</source>
        <translation>Hide the conversation list</translation>
    </message>
    <message>
        <source>Show the conversation list</source>
        <translation>Show the conversation list</translation>
    </message>
    <message>
        <source>PagedChat</source>
        <translation>PagedChat</translation>
    </message>
    <message>
        <source>Language: %1</source>
        <translation>Language: %1</translation>
    </message>
    <message>
        <source>Choose the language</source>
        <translation>Choose the language</translation>
    </message>
    <message>
        <source>The language of PagedChat; System follows the system settings</source>
        <translation>The language of PagedChat; System follows the system settings</translation>
    </message>
    <message>
        <source>+ Add pane</source>
        <translation>+ Add pane</translation>
    </message>
    <message>
        <source>Add a chat pane</source>
        <translation>Add a chat pane</translation>
    </message>
    <message>
        <source>Open another chat side by side (up to %1)</source>
        <translation>Open another chat side by side (up to %1)</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n panes</source>
        <translation>
            <numerusform>%1 of %n pane</numerusform>
            <numerusform>%1 of %n panes</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ChatInput</name>
    <message>
        <source>Message input area</source>
        <translation>Message input area</translation>
    </message>
    <message>
        <source>Type a message…</source>
        <translation>Type a message…</translation>
    </message>
    <message>
        <source>Message for pane %1</source>
        <translation>Message for pane %1</translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter adds a line</source>
        <translation>Enter sends, Shift+Enter adds a line</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stop</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Send</translation>
    </message>
    <message>
        <source>Stop generating in pane %1</source>
        <translation>Stop generating in pane %1</translation>
    </message>
    <message>
        <source>Send message in pane %1</source>
        <translation>Send message in pane %1</translation>
    </message>
    <message>
        <source>Enter to send · Shift+Enter for a new line</source>
        <translation>Enter to send · Shift+Enter for a new line</translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <source>Chat pane %1</source>
        <translation>Chat pane %1</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
</context>
<context>
    <name>ChatSession</name>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <source>No model is loaded: %1</source>
        <translation>No model is loaded: %1</translation>
    </message>
    <message>
        <source>Not sent: %1 Your text is back in the input box.</source>
        <translation>Not sent: %1 Your text is back in the input box.</translation>
    </message>
</context>
<context>
    <name>ConversationDelegate</name>
    <message>
        <source>Open conversation %1</source>
        <translation>Open conversation %1</translation>
    </message>
    <message>
        <source>d MMM, hh:mm</source>
        <extracomment>Date format of a conversation&apos;s last activity (QDateTime format: day, month, time)</extracomment>
        <translation>d MMM, hh:mm</translation>
    </message>
    <message>
        <source>Last activity %1</source>
        <translation>Last activity %1</translation>
    </message>
    <message>
        <source>Delete conversation %1</source>
        <translation>Delete conversation %1</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>Delete conversation</translation>
    </message>
</context>
<context>
    <name>ConversationList</name>
    <message>
        <source>Conversations</source>
        <translation>Conversations</translation>
    </message>
    <message>
        <source>Chats</source>
        <translation>Chats</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>New conversation</translation>
    </message>
    <message>
        <source>Conversation list</source>
        <translation>Conversation list</translation>
    </message>
    <message>
        <source>Scroll conversations</source>
        <translation>Scroll conversations</translation>
    </message>
    <message>
        <source>No conversations yet. Type a message in a pane to start one.</source>
        <translation>No conversations yet. Type a message in a pane to start one.</translation>
    </message>
</context>
<context>
    <name>EngineClient</name>
    <message>
        <source>The model could not be loaded.</source>
        <translation>The model could not be loaded.</translation>
    </message>
</context>
<context>
    <name>EngineWorker</name>
    <message>
        <source>%1 layers, dim %2, vocab %3, %4 KV blocks, chat template %5</source>
        <translation>%1 layers, dim %2, vocab %3, %4 KV blocks, chat template %5</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>No model is loaded.</translation>
    </message>
    <message>
        <source>The message is %1 tokens long; the model&apos;s context holds %2.</source>
        <translation>The message is %1 tokens long; the model&apos;s context holds %2.</translation>
    </message>
    <message>
        <source>Engine error: %1</source>
        <translation>Engine error: %1</translation>
    </message>
</context>
<context>
    <name>ErrorWindow</name>
    <message>
        <source>PagedChat: cannot start</source>
        <translation>PagedChat: cannot start</translation>
    </message>
    <message>
        <source>Error details</source>
        <translation>Error details</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Quit</translation>
    </message>
    <message>
        <source>Quit PagedChat</source>
        <translation>Quit PagedChat</translation>
    </message>
</context>
<context>
    <name>GeneratingChip</name>
    <message>
        <source>Generating</source>
        <translation>Generating</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>PagedChat</source>
        <translation>PagedChat</translation>
    </message>
    <message>
        <source>The model could not be loaded: %1</source>
        <translation>The model could not be loaded: %1</translation>
    </message>
    <message>
        <source>Scroll chat panes</source>
        <translation>Scroll chat panes</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>interrupted</source>
        <translation>interrupted</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>stopped</translation>
    </message>
    <message>
        <source>length limit reached</source>
        <translation>length limit reached</translation>
    </message>
    <message>
        <source>(no reply — interrupted)</source>
        <translation>(no reply — interrupted)</translation>
    </message>
    <message>
        <source>(no reply — stopped)</source>
        <translation>(no reply — stopped)</translation>
    </message>
    <message>
        <source>(no reply)</source>
        <translation>(no reply)</translation>
    </message>
    <message>
        <source>You: %1</source>
        <translation>You: %1</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>Model: %1</translation>
    </message>
</context>
<context>
    <name>MessageList</name>
    <message>
        <source>Messages in pane %1</source>
        <translation>Messages in pane %1</translation>
    </message>
    <message>
        <source>Scroll messages</source>
        <translation>Scroll messages</translation>
    </message>
    <message>
        <source>Start a story: type its first words below and press Enter.</source>
        <translation>Start a story: type its first words below and press Enter.</translation>
    </message>
</context>
<context>
    <name>PaneHeader</name>
    <message>
        <source>Pane %1 conversation: %2</source>
        <translation>Pane %1 conversation: %2</translation>
    </message>
    <message>
        <source>Close pane %1</source>
        <translation>Close pane %1</translation>
    </message>
    <message>
        <source>Close this pane</source>
        <translation>Close this pane</translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
    <message>
        <source>Loading %1…</source>
        <translation>Loading %1…</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>No model loaded</translation>
    </message>
    <message numerus="yes">
        <source>%n running</source>
        <translation>
            <numerusform>%n running</numerusform>
            <numerusform>%n running</numerusform>
        </translation>
    </message>
    <message>
        <source>idle</source>
        <translation>idle</translation>
    </message>
    <message>
        <source>Model: %1  ·  %2 tok/s  ·  %3</source>
        <translation>Model: %1  ·  %2 tok/s  ·  %3</translation>
    </message>
    <message>
        <source>Engine status</source>
        <translation>Engine status</translation>
    </message>
    <message>
        <source>Model details</source>
        <translation>Model details</translation>
    </message>
    <message>
        <source>Data: %1</source>
        <translation>Data: %1</translation>
    </message>
    <message>
        <source>Data folder</source>
        <translation>Data folder</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>PagedChat could not open its chat data.</source>
        <translation>PagedChat could not open its chat data.</translation>
    </message>
    <message>
        <source>Check that folder, or start PagedChat with --data-dir DIR to use another one.</source>
        <translation>Check that folder, or start PagedChat with --data-dir DIR to use another one.</translation>
    </message>
</context>
</TS>
